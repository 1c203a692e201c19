"""Relative dates read against the day they were said, for verification's item check and flow alike."""

from __future__ import annotations

from memtrace.eval.relative_dates import resolve_relative, with_resolved_dates


def test_last_weekday_is_the_latest_such_day_before_the_day_it_was_said() -> None:
    assert "(11 June 2023)" in with_resolved_dates("Last Sunday was awesome [said on 13 June 2023]")
    # said on a Sunday, "last Sunday" is the week before, never the same day
    assert "(4 June 2023)" in with_resolved_dates("last Sunday we hiked [said on 11 June 2023]")
    assert "(12 June 2023)" in resolve_relative("We met last Monday. [said on 13 June 2023]")


def test_the_date_is_written_after_the_expression_and_the_stamp_kept() -> None:
    text = "I moved last week! Loving it. [said on 4 May 2023]"
    assert with_resolved_dates(text) == (
        "I moved last week (the week before 4 May 2023)! Loving it. [said on 4 May 2023]"
    )
    # an anchor given for a line the text stamps elsewhere (a retrieved chunk's last line)
    assert with_resolved_dates("We left yesterday.", anchor=None) == "We left yesterday."
    from datetime import date

    assert with_resolved_dates("We left yesterday.", date(2023, 5, 4)) == "We left yesterday (3 May 2023)."


def test_this_month_is_the_month_it_was_said_in() -> None:
    said = "I lost my job at Door Dash this month. [said on 20 January 2023]"
    assert with_resolved_dates(said) == (
        "I lost my job at Door Dash this month (January 2023). [said on 20 January 2023]"
    )
    assert "(2023)" in with_resolved_dates("This year was hard. [said on 20 January 2023]")


def test_next_month_and_next_year_are_the_ones_after_the_day_it_was_said() -> None:
    said = "Let's hike next month when it's cooler. [said on 8 July 2023]"
    assert "next month (August 2023)" in with_resolved_dates(said)
    assert "(January 2024)" in with_resolved_dates("See you next month [said on 8 December 2023]")
    assert "(2024)" in with_resolved_dates("We move next year [said on 8 December 2023]")


def test_on_a_weekday_told_in_the_past_is_the_one_before_the_day_it_was_said() -> None:
    """ "On Friday, Tim got great news", said on Sunday 7 January 2024, is Friday 5 January; a plain
    "on Friday" still to come, or in a sentence with no past tense, names no day."""
    said = "On Friday, Tim got great news - he is in the program! [said on 7 January 2024]"
    assert with_resolved_dates(said).startswith("On Friday (5 January 2024), Tim got great news")
    assert "(5 January 2024)" in resolve_relative(said)
    for later in (
        "I'll call you on Friday, promise. [said on 7 January 2024]",
        "Practice is on Monday. [said on 7 January 2024]",
    ):
        assert with_resolved_dates(later) == later
        assert resolve_relative(later) == later
