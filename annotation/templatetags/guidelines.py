"""`{{ text|markdown }}`: a campaign's guidelines (Markdown) as safe HTML.

markdown-it-py with raw HTML switched off: any HTML the organiser types is shown as text, never run, and
links only to http(s), mailto and relative addresses (its validateLink refuses javascript:, vbscript:,
file: and data:). Links open in the same tab and send no referrer.

A text is rendered once per change, not on every page load: its HTML is cached under the hash of the text (a
changed text has another key), in Django's cache (shared by the web processes) and in this process. 100 KB of
`![` took markdown-it 5–6 s, on every page of the campaign (issue 38, item 11).
"""

import hashlib
from functools import lru_cache

from django import template
from django.core.cache import cache
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

register = template.Library()
MAX_CHARS = 100_000


@lru_cache(maxsize=1)
def _parser():
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")

    def link_open(renderer, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


CACHE_SECONDS = 30 * 24 * 3600


def render_markdown(text: str) -> str:
    """The HTML of Markdown `text` (raw HTML escaped), rendered once per text (see above)."""
    text = (text or "")[:MAX_CHARS]
    if not text:
        return ""
    return _rendered(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), text)


@lru_cache(maxsize=32)
def _rendered(digest: str, text: str) -> str:
    key = f"pooljudge:markdown:{digest}"
    html = cache.get(key)
    if html is None:
        html = _parser().render(text)
        cache.set(key, html, CACHE_SECONDS)
    return html


@register.filter(name="markdown")
def markdown_filter(text):
    return mark_safe(render_markdown(text))  # noqa: S308 — markdown-it escapes every raw HTML and unsafe link
