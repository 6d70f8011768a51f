"""THE JSON parser of the API (settings REST_FRAMEWORK and every view that names its parsers): DRF's, with the body read
by retrieval.ingest.load_json, the one reader of uploaded JSON, so that what json.load lets through or fails on
outside ValueError is a 400 (ParseError), not a 500: nesting deeper than the parser recurses (RecursionError), text no
database stores (an escaped NUL, a lone surrogate: UnicodeEncodeError when stored), an integer of more digits than
Python converts. NaN and Infinity stay refused, as DRF's strict parser refuses them."""

import codecs
import json

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils.json import strict_constant

from retrieval.ingest import InvalidJSON, load_json


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
        except ValueError as exc:  # bytes that are not of the encoding
            raise ParseError(f"JSON parse error - {exc}") from None
        try:
            data = load_json(text)
            if self.strict and ("NaN" in text or "Infinity" in text):
                json.loads(text, parse_constant=strict_constant)
        except InvalidJSON as exc:
            raise ParseError(f"JSON parse error - {exc.message}") from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        return data
