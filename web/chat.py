"""The chat page (issue #7; design v2 §2.3 "Chat.tsx").

The view renders the page shell and the translated UI strings; every piece of data
(agents, threads, runs, what a run remembered) comes from the public API in
``static/web/chat.js``.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET


def chat_strings() -> dict[str, str]:
    """Every string chat.js shows. Placeholders use the ``%(name)s`` form."""
    return {
        "you": _("我"),
        "assistant": _("助手"),
        "thinking": _("正在思考…"),
        "answering": _("助手正在回答…"),
        "answered": _("助手已回答。"),
        "untitled": _("未命名会话"),
        "newThreadTitle": _("新会话"),
        "newThreadHint": _("这是一个新会话。发送第一条消息后，它会出现在左侧的会话列表里。"),
        "noThreads": _("还没有会话。"),
        "noAgents": _("你还没有可用的智能体，请联系学校管理员。"),
        "loadMore": _("加载更多"),
        "rename": _("重命名"),
        "renameLabel": _("新的会话标题"),
        "save": _("保存"),
        "cancel": _("取消"),
        "archive": _("归档"),
        "archived": _("会话已归档。"),
        "runs": _("%(n)s 轮"),
        "retry": _("重试"),
        "remembered": _("它记得什么"),
        "continueFrom": _("在上次产物上继续"),
        "continueChip": _("将在第 %(n)s 轮的产物上继续"),
        "continueChipDismiss": _("不在该产物上继续"),
        "continuedFrom": _("在第 %(n)s 轮的产物上继续"),
        "offlineBadgeTitle": _("这是无需联网的演示模型，回复是确定性的演示内容。"),
        "memoryNotice": _(
            "提示：为了整理记忆（会话摘要、提炼要点），本智能体的对话内容会交给另一家云端模型处理：%(label)s。"
        ),
        "dismiss": _("知道了"),
        "failedRun": _("这一轮没有成功完成。"),
        "networkError": _("网络连接中断，消息没有发出或回复没有收完。请检查网络后重试。"),
        "httpError": _("服务器出错了（HTTP %(status)s），请稍后重试。"),
        "sessionExpired": _("登录已过期，请刷新页面重新登录。"),
        "throttled": _("发送得太频繁了，请稍后再试（约 %(seconds)s 秒后可以重新发送）。"),
        "throttledSoon": _("发送得太频繁了，请稍后再试。"),
        "notFound": _("找不到这个智能体或会话，它可能已被删除。"),
        "threadUnavailable": _("这个会话已不可用。已为你切换到新会话，请重新发送。"),
        "rejected": _("请求没有被接受：%(message)s"),
        "loadFailed": _("加载失败，请刷新页面重试。"),
        "actionFailed": _("操作失败：%(message)s"),
        "contextTitle": _("它记得什么"),
        "contextIntro": _("这是这一轮开始时，系统注入给助手的记忆原文和来源。"),
        "contextEmpty": _("这一轮没有注入任何记忆。"),
        "contextLoading": _("正在加载…"),
        "manifestTitle": _("来源摘要"),
        "sectionCore": _("核心记忆"),
        "sectionThread": _("本会话前情"),
        "sectionRecall": _("相关历史"),
        "sectionKb": _("知识库"),
        "sectionContinue": _("上次产物"),
        "tokens": _("%(n)s token"),
        "factIds": _("事实 #%(ids)s"),
        "runIds": _("轮次 #%(ids)s"),
        "entryIds": _("条目 #%(ids)s"),
        "chunkIds": _("片段 #%(ids)s"),
        "summaryTokens": _("摘要 %(n)s token，最近对话 %(m)s token"),
        "truncated": _("已截断"),
        "ledgerTotal": _("合计 %(used)s / %(total)s token"),
        "close": _("关闭"),
        # Rendered answers (issue #16).
        "copy": _("复制"),
        "copyTitle": _("复制这条回答的 Markdown 原文"),
        "copied": _("已复制"),
        "copyFailed": _("复制失败，请手动选择文字复制"),
        "downloadWord": _("下载 Word"),
        "downloadWordTitle": _("把这条回答下载为 Word 文档（.docx）"),
        "imagePlaceholder": _("［图片：%(alt)s］"),
        "imageNoAlt": _("［图片］"),
        "formulaPending": _("公式生成中…"),
    }


@require_GET
@login_required
@ensure_csrf_cookie
def chat_page(request: HttpRequest) -> HttpResponse:
    api_root = reverse("api-agents").removesuffix("agents")
    config = {
        "apiRoot": api_root,
        "csrfCookieName": settings.CSRF_COOKIE_NAME,
        # Namespaces localStorage keys: a school computer is shared by several teachers.
        "userKey": str(request.user.pk),
        "inputMaxChars": settings.RUN_INPUT_MAX_CHARS,
    }
    return render(
        request,
        "web/chat.html",
        {"chat_config": config, "chat_strings": chat_strings()},
    )


urlpatterns: list[URLPattern] = [
    path("chat/", chat_page, name="chat"),
]
