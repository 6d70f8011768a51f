"""`{{ text|prose }}`: a passage's text as paragraphs, its hard-wrapped lines joined.

Collections such as Cranfield store abstracts wrapped at about 70 characters: `linebreaks` turned every line end
into a break, so a reader saw a column of short lines. Here a blank line (or more) starts a paragraph, and the lines
within one are joined by a space. The text is escaped (passage text is untrusted).
"""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import mark_safe

register = template.Library()
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"[ \t]*\n[ \t]*")


@register.filter(is_safe=True)
def prose(text) -> str:
    text = str(text or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    paragraphs = (_LINE_BREAK.sub(" ", part) for part in _PARAGRAPH_BREAK.split(text) if part.strip())
    return mark_safe("".join(f"<p>{escape(p)}</p>" for p in paragraphs))
