"""The chat page's browser libraries are vendored, pinned, licensed and served locally."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

from tests.factories import Teacher

ROOT = Path(__file__).resolve().parents[2]
VENDOR = ROOT / "static" / "vendor"
PINS = json.loads((ROOT / "scripts" / "vendor-js" / "package.json").read_text())["dependencies"]


# The browser tests' own libraries (axe-core): vendored beside them, never served.
TEST_VENDOR = ROOT / "tests" / "browser" / "vendor"
TEST_ONLY = {"axe-core"}


def test_every_pinned_package_is_listed_with_its_version_and_licence_text() -> None:
    lock = json.loads((ROOT / "scripts" / "vendor-js" / "package-lock.json").read_text())
    for name, version in PINS.items():
        folder = TEST_VENDOR if name in TEST_ONLY else VENDOR
        table = (folder / "LICENSES.md").read_text()
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned exactly"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
        row = next(line for line in table.splitlines() if line.startswith(f"| {name} "))
        assert f"| {version} |" in row
        for licence in re.findall(r"[\w./@-]+LICENSE[\w.-]*", row.split("|")[5]):
            assert (folder / licence).is_file(), licence


def test_test_only_libraries_are_not_among_the_served_static_files() -> None:
    assert (TEST_VENDOR / "axe-core" / "axe.min.js").is_file()
    served = [str(path) for path in (ROOT / "static").rglob("*") if "axe" in path.name]
    assert served == []


def test_katex_fonts_are_served_from_the_vendor_folder() -> None:
    css = (VENDOR / "katex" / "katex.min.css").read_text()
    fonts = set(re.findall(r"url\(([^)]+)\)", css))
    assert fonts and all(not f.startswith(("http:", "https:", "//")) for f in fonts)
    missing = [f for f in fonts if not (VENDOR / "katex" / f).is_file()]
    assert missing == []


@pytest.mark.django_db
def test_the_chat_page_loads_only_local_scripts_and_styles(teacher: Teacher) -> None:
    client = Client()
    client.force_login(teacher.user)
    html = client.get("/chat/").content.decode()
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert "/static/vendor/katex/katex.min.js" in sources
    assert "/static/vendor/dompurify/purify.min.js" in sources
    for source in sources:
        assert source.startswith("/static/"), source
        assert (ROOT / "static" / source.removeprefix("/static/")).is_file(), source
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert "img-src 'self' data:" in policy.group(1)
    assert "script-src 'self';" in policy.group(1)


def test_collectstatic_with_the_manifest_storage_accepts_the_vendored_files(
    tmp_path: Path,
) -> None:
    """Production hashes static files; every file a vendored one names must exist."""
    manifest = {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}
    with override_settings(
        STATIC_ROOT=tmp_path, STORAGES={**settings.STORAGES, "staticfiles": manifest}
    ):
        call_command("collectstatic", "--noinput", verbosity=0)
    assert list(tmp_path.glob("vendor/katex/fonts/KaTeX_Main-Regular.*.woff2"))
