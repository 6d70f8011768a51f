"""OpenAPI schema post-processing: the error responses every operation can give, and the form of path parameters.

drf-spectacular documents the responses a view declares; the errors that DRF itself gives
(401 without credentials, 403 for the wrong role, 404 for an unknown object, 400 for invalid query
parameters, a list's cursor and page size among them, 415 for a body without a media type the operation
takes) are added here, so that clients and schemathesis know them.

An optional query parameter sent empty is taken as not sent (DRF's rule for form-like input): the schema says
so with allowEmptyValue. Path parameters are routed as any text (config/api_urls.py), so that a malformed one gets the
API's JSON 404; their real form is given here: ids are integers, names are slugs.
"""

PATH_FORMS = {
    "id": {"type": "integer"},
    "name": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},  # SlugField: campaign and pool names
}
DETAIL = {"$ref": "#/components/schemas/Detail"}
FIELD_ERRORS = {
    "type": "object",
    "description": "What is wrong with each field of the request: {field: [message, ...]} or {detail: message}.",
    "additionalProperties": {},
}
DETAIL_COMPONENT = {
    "type": "object",
    "description": "An error with a message.",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}


def _json(schema, description):
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def error_responses(result, generator, request, public):
    """Add 400/401/403/404/415 where an operation can give them, and the form of `id` and `name` path parameters."""
    result.setdefault("components", {}).setdefault("schemas", {}).setdefault("Detail", DETAIL_COMPONENT)
    for path, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            parameters = operation.get("parameters", [])
            for parameter in parameters:
                if parameter["in"] == "path" and parameter["name"] in PATH_FORMS:
                    parameter["schema"] = dict(PATH_FORMS[parameter["name"]])
            responses = operation.setdefault("responses", {})
            if operation.get("security") and {} not in operation["security"]:
                responses.setdefault("401", _json(DETAIL, "No credentials, or a wrong or revoked token."))
                responses.setdefault("403", _json(DETAIL, "The caller's role may not do this."))
            queries = [p for p in parameters if p["in"] == "query"]
            for parameter in queries:
                if not parameter.get("required"):
                    # DRF reads an empty optional query parameter (`?cursor=`, `?aggregate=`) as one not given.
                    parameter["allowEmptyValue"] = True
            if "{" in path:
                responses.setdefault("404", _json(DETAIL, "No such object, or not one the caller may see."))
            if queries or "requestBody" in operation:
                responses.setdefault("400", _json(FIELD_ERRORS, "The request is invalid."))
            if "requestBody" in operation:
                responses.setdefault("415", _json(DETAIL, "The body is not of a media type the operation takes "
                                                          "(or has no Content-Type)."))
    return result
