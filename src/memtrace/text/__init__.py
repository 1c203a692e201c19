"""Text helpers every layer shares: tokens and stems, message-id tags, dates, safe file names.

Pure string functions with no memtrace imports but each other, so retrieval, eval, datasets, the
systems and attribution all read and write text the same way (and importing them loads no numpy).

    from memtrace.text import tokenize, porter_stem, tag_lines, untag, format_date, parse_when
"""

from .dates import format_date, parse_when, resolve_date, session_date_text
from .filenames import safe_filename
from .stem import porter_stem
from .tags import tag_lines, tagged_line, untag, untagged
from .tokens import ENGLISH_STOPWORDS, sentences, split_cjk, tokenize

__all__ = [
    "ENGLISH_STOPWORDS",
    "format_date",
    "parse_when",
    "porter_stem",
    "resolve_date",
    "safe_filename",
    "sentences",
    "session_date_text",
    "split_cjk",
    "tag_lines",
    "tagged_line",
    "tokenize",
    "untag",
    "untagged",
]
