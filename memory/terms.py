"""The term calendar: when "本学期" (this term) ends. Pure, Django-free.

A school's calendar is a list of term ends, each either a recurring day (``MM-DD``,
every year) or one date (``YYYY-MM-DD``). The default (``01-31,07-15``) is the usual
Chinese school year: the autumn term ends by late January, the spring term by mid-July.
A school sets its own in ``MEMORY_TERM_ENDS``. The current term ends on the first term
end on or after today: a fact confirmed "for this term" is valid through that day.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

_RECURRING = re.compile(r"^(\d{2})-(\d{2})$")
_DATED = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


class TermCalendarError(ValueError):
    """A term end that is neither ``MM-DD`` nor ``YYYY-MM-DD``, or no such day."""


@dataclass(frozen=True, slots=True)
class TermCalendar:
    recurring: tuple[tuple[int, int], ...] = ()
    dated: tuple[date, ...] = ()

    @classmethod
    def parse(cls, items: Iterable[str]) -> TermCalendar:
        recurring: set[tuple[int, int]] = set()
        dated: set[date] = set()
        for raw in items:
            item = raw.strip()
            if match := _RECURRING.match(item):
                month, day = int(match[1]), int(match[2])
                try:
                    date(2000, month, day)  # a leap year: 02-29 is a valid recurring day
                except ValueError as exc:
                    raise TermCalendarError(f"no such day: {item!r}") from exc
                recurring.add((month, day))
            elif match := _DATED.match(item):
                try:
                    dated.add(date(int(match[1]), int(match[2]), int(match[3])))
                except ValueError as exc:
                    raise TermCalendarError(f"no such date: {item!r}") from exc
            else:
                raise TermCalendarError(f"a term end is MM-DD or YYYY-MM-DD, got {item!r}")
        if not recurring and not dated:
            raise TermCalendarError("the term calendar needs at least one term end")
        return cls(recurring=tuple(sorted(recurring)), dated=tuple(sorted(dated)))

    def current_term_end(self, today: date) -> date:
        """The end of the term ``today`` belongs to: the first term end on or after it.

        With only one-off dates, all of them past, the last one is returned (a past date:
        the calendar needs updating, and a fact "for this term" is then already expired,
        which the panel shows).
        """
        candidates = [d for d in self.dated if d >= today]
        for year in (today.year, today.year + 1):
            for month, day in self.recurring:
                try:
                    end = date(year, month, day)
                except ValueError:  # 02-29 outside a leap year: the day before
                    end = date(year, month, day - 1)
                if end >= today:
                    candidates.append(end)
        if candidates:
            return min(candidates)
        return self.dated[-1]
