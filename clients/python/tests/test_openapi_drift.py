"""The client's models and verbs against the server's own ``/openapi.json`` (served by the test
server, built from this checkout): a field, a required field, an enum value, a type, a route, a
query parameter or a component the client does not know fails here, naming what to change.

When the server grows (a new field, route or component), either model it in
``src/airlock_client/models.py`` / ``_api.py``, or list it below with the reason it is left out."""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

import httpx
import pytest
from conftest import Server
from pydantic import BaseModel

from airlock_client import _api, models
from airlock_client._core import Call, Options, Secret

#: Components of the document the client has no model for, and why.
NOT_MODELLED: dict[str, str] = {
    "Health": "GET /healthz is for load balancers; the client never reads it",
    "Problem": "errors.py reads it as a dict into AirlockError.problem (its fields: below)",
    "VerifyResult": "GET /v1/audit/verify is an admin check: `airlock audit verify`",
    "TokenRecord": "tokens are managed with `airlock token create|list|revoke`",
    "TokenCreated": "tokens are managed with `airlock token create|list|revoke`",
    "TokenList": "tokens are managed with `airlock token create|list|revoke`",
    "TokenInput": "tokens are managed with `airlock token create|list|revoke`",
    "EmbedDecisionInput": "sent by the approval card in the browser, with the minted token",
    **{
        name: "execution states and resume tickets landed during issue 36: not in the client yet"
        for name in (
            "ExecutionOutcome",
            "ExecutionRenewal",
            "ExecutionResolution",
            "Ticket",
            "TicketFinish",
            "TicketFinished",
            "TicketInput",
        )
    },
}

#: Routes the client does not call, and why.
NOT_CALLED: dict[tuple[str, str], str] = {
    ("GET", "/healthz"): "for load balancers",
    ("GET", "/openapi.json"): "this test reads it",
    ("GET", "/metrics"): "Prometheus scrapes it",
    (
        "GET",
        "/v1/events",
    ): "Server-Sent Events for UIs; `audit(request_id=...)` reads the same events",
    ("GET", "/v1/audit/verify"): "an admin check: `airlock audit verify`",
    ("GET", "/v1/tokens"): "`airlock token list`",
    ("POST", "/v1/tokens"): "`airlock token create`",
    ("DELETE", "/v1/tokens/{id}"): "`airlock token revoke`",
    ("GET", "/v1/embed/requests/{id}"): "the approval card's route (browser, minted token)",
    ("GET", "/v1/embed/requests/{id}/wait"): "the approval card's route (browser, minted token)",
    (
        "POST",
        "/v1/embed/requests/{id}/decisions",
    ): "the approval card's route (browser, minted token)",
    **{
        route: "execution states and resume tickets landed during issue 36: not in the client yet"
        for route in (
            ("POST", "/v1/requests/{id}/execution/renewal"),
            ("POST", "/v1/requests/{id}/execution/outcome"),
            ("POST", "/v1/requests/{id}/execution/resolution"),
            ("POST", "/v1/tickets"),
            ("POST", "/v1/tickets/finish"),
        )
    },
}

#: Body fields the client leaves to the server, and why.
SERVER_SETS: dict[str, dict[str, str]] = {
    "RequestInput": {"requester": "the server takes it from the agent's token"},
    "DecisionInput": {
        "reviewer": "the server takes it from the token",
        "groups": "the server takes them from the token",
        "channel": "the server sets `api`",
    },
    "CancelInput": {"by": "the server takes it from the token"},
    "AuditInput": {"actor": "the server takes it from the token"},
}

#: What errors.py reads from a problem document.
PROBLEM_FIELDS_READ = ("code", "detail", "field", "request", "decision", "retryAfterSeconds")

#: One call of each verb with every parameter given (the query it sends is checked in full).
SAMPLES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "request": (("T",), {"action": "a", "key": "k", "timeout_s": 1}),
    "get": (("req_1",), {}),
    "view": (("req_1",), {}),
    "get_by_key": (("k",), {"requester": "bot"}),
    "list": (
        (),
        {
            "status": "pending",
            "action": "a",
            "approver": "ops",
            "requester": "bot",
            "q": "x",
            "cursor": "c",
            "limit": 5,
            "order": "asc",
        },
    ),
    "wait": (("req_1", 1.0), {}),
    "decide": (("req_1", "approved"), {"comment": "ok"}),
    "cancel": (("req_1",), {"reason": "r"}),
    "claim_execution": (("req_1",), {}),
    "decide_many": ((), {"ids": ["req_1"], "outcome": "approved"}),
    "record": (("notified",), {"request_id": "req_1", "data": {}}),
    "audit": ((), {"request_id": "req_1", "after": 1, "limit": 5}),
    "outbox": (
        (),
        {
            "request_id": "req_1",
            "target": "t",
            "status": "pending",
            "topic": "created",
            "after": "o",
            "limit": 5,
        },
    ),
    "mint_embed_token": (("req_1", "alice"), {"groups": ["ops"], "ttl_s": 60}),
    "trust_suggestions": ((), {}),
    "trust_rules": ((), {"include_revoked": True}),
    "accept_trust_rule": (("a", "0" * 64), {"any_requester": True}),
    "revoke_trust_rule": (("rule_1",), {}),
}


@pytest.fixture(scope="module")
def openapi(server: Server) -> dict[str, Any]:
    res = httpx.get(
        f"{server.url}/openapi.json",
        headers={"authorization": f"Bearer {server.admin_token}"},
        timeout=10,
    )
    res.raise_for_status()
    doc: dict[str, Any] = res.json()
    return doc


def component_models() -> dict[str, type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for name in dir(models):
        value = getattr(models, name)
        if (
            isinstance(value, type)
            and issubclass(value, models._Wire)
            and value is not models._Wire
        ):
            found[name] = value
    return found


def test_every_component_is_modelled_or_left_out_with_a_reason(openapi: dict[str, Any]) -> None:
    modelled = set(component_models()) | {"OnTimeout"}
    unknown = sorted(set(openapi["components"]["schemas"]) - modelled - set(NOT_MODELLED))
    assert unknown == [], (
        f"the server's components {unknown} have no model in airlock_client/models.py: add one of "
        "the same name, or list it in NOT_MODELLED with the reason"
    )
    gone = sorted(set(NOT_MODELLED) - set(openapi["components"]["schemas"]))
    assert gone == [], f"NOT_MODELLED names components the server no longer has: {gone}"


def test_each_model_matches_its_component(openapi: dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    errors: list[str] = []
    for name, model in component_models().items():
        if name in schemas:
            inputs = name.endswith("Input")
            errors += Compare(openapi, inputs=inputs).model(model, schemas[name], name)
    errors += Compare(openapi, inputs=False).annotation(
        models.OnTimeout, schemas["OnTimeout"], "OnTimeout"
    )
    assert errors == [], "the client's models drifted from /openapi.json:\n" + "\n".join(errors)


def test_problem_fields_read_by_the_errors_exist(openapi: dict[str, Any]) -> None:
    props = openapi["components"]["schemas"]["Problem"]["properties"]
    assert [f for f in PROBLEM_FIELDS_READ if f not in props] == []


@pytest.mark.parametrize("verb", sorted(_api.VERBS))
def test_each_verb_matches_its_route(openapi: dict[str, Any], verb: str) -> None:
    steps = _api.VERBS[verb]
    route = _api.route_of(steps)
    ops = openapi["paths"].get(route.path, {})
    op = ops.get(route.method.lower())
    assert op is not None, f"`{verb}`: the server has no {route.method} {route.path}"
    params = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
    assert set(route.query) <= params, f"`{verb}` sends {set(route.query) - params} not declared"
    assert params - set(route.query) == set(route.not_offered), (
        f"`{verb}`: the route's query parameters {sorted(params - set(route.query))} are neither "
        "offered nor listed in `not_offered` with a reason"
    )
    body = (op.get("requestBody") or {}).get("content", {}).get("application/json", {})
    body_ref = body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1] or None
    assert body_ref == (route.body.__name__ if route.body else None), verb
    answers = [
        a["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
        for code, a in op["responses"].items()
        if code.startswith("2") and "application/json" in a.get("content", {})
    ]
    assert answers == [route.answer.__name__], f"`{verb}` reads {route.answer.__name__}: {answers}"

    # The call the verb really makes is the route it names, with every offered parameter.
    args, kwargs = SAMPLES[verb]
    options = Options("http://127.0.0.1:1", Secret("t"))
    call = next(steps(options, *args, **kwargs))
    assert isinstance(call, Call)
    assert call.method == route.method
    assert call.path == route.path.replace("{id}", args[0] if args else ""), verb
    assert set(call.query) == set(route.query), verb


def test_every_route_is_a_verb_or_left_out_with_a_reason(openapi: dict[str, Any]) -> None:
    called = {(r.method, r.path) for r in map(_api.route_of, _api.VERBS.values())}
    served = {(m.upper(), p) for p, ops in openapi["paths"].items() for m in ops}
    unknown = sorted(served - called - set(NOT_CALLED))
    assert unknown == [], (
        f"the server serves {unknown}, which the client neither calls nor lists in NOT_CALLED: "
        "add a verb to _api.py, or list the route with the reason"
    )
    assert sorted(set(NOT_CALLED) - served) == [], "NOT_CALLED names routes the server dropped"


# --- the comparison --------------------------------------------------------------------------------

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (float, int),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


class Compare:
    """Compares pydantic models and annotations with JSON Schemas of the document. ``inputs``:
    the client sends it (every field it has must exist; every required one must be required);
    else it reads it (every property must be a field; a field required here must be required
    there)."""

    def __init__(self, doc: dict[str, Any], *, inputs: bool) -> None:
        self.doc = doc
        self.inputs = inputs
        self.seen: set[tuple[type, int]] = set()

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        for _ in range(20):  # bounded: refs to refs
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                return schema
            schema = self.doc["components"]["schemas"][ref.rsplit("/", 1)[-1]]
        return schema

    def model(self, model: type[BaseModel], schema: dict[str, Any], where: str) -> list[str]:
        schema = self.resolve(schema)
        if (model, id(schema)) in self.seen:
            return []
        self.seen.add((model, id(schema)))
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = {(f.alias or n): f for n, f in model.model_fields.items()}
        errors: list[str] = []
        left_out = SERVER_SETS.get(model.__name__, {}) if self.inputs else {}
        for name in sorted(set(props) - set(fields) - set(left_out)):
            errors.append(f"{where}.{name}: in the document, not in {model.__name__}")
        for name in sorted(set(fields) - set(props)):
            errors.append(f"{where}.{name}: in {model.__name__}, not in the document")
        for name, field in fields.items():
            if name not in props:
                continue
            if self.inputs and name in required and not field.is_required():
                errors.append(f"{where}.{name}: required by the server, optional in the client")
            if not self.inputs and field.is_required() and name not in required:
                errors.append(f"{where}.{name}: optional in the document, required in the client")
            errors += self.annotation(field.annotation, props[name], f"{where}.{name}")
        return errors

    def annotation(self, ann: Any, schema: dict[str, Any], where: str) -> list[str]:
        schema = self.resolve(schema)
        if ann is Any:
            return []
        members = [m for m in flatten(ann) if m is not type(None)]
        literals = {v for m in members if get_origin(m) is Literal for v in get_args(m)}
        others = [m for m in members if get_origin(m) is not Literal]
        branches = self.branches(schema)
        wanted = {v for b in branches for v in enum_of(b)}
        shaped = [b for b in branches if not enum_of(b)]
        errors: list[str] = []
        if wanted != literals:
            errors.append(
                f"{where}: the document allows {sorted(map(str, wanted))}, the client {sorted(map(str, literals))}"
            )
        for branch in shaped:
            if branch.get("type") == "null" and type(None) in flatten(ann):
                continue
            tries = [self.single(m, branch, where) for m in others]
            if not any(t == [] for t in tries):
                best = min(tries, key=len) if tries else [f"{where}: no type for {branch}"]
                errors += best
        return errors

    def branches(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        if "anyOf" in schema:
            return [b for s in schema["anyOf"] for b in self.branches(self.resolve(s))]
        if isinstance(schema.get("type"), list):
            return [{**schema, "type": t} for t in schema["type"]]
        return [schema]

    def single(self, ann: Any, schema: dict[str, Any], where: str) -> list[str]:
        kind = schema.get("type")
        origin = get_origin(ann)
        if ann is Any:
            return []
        if kind in JSON_TYPES:
            if ann in JSON_TYPES[kind]:
                return []
            return [f"{where}: the document has {kind}, the client {ann}"]
        if kind == "array":
            if origin is not list:
                return [f"{where}: the document has an array, the client {ann}"]
            return self.annotation(get_args(ann)[0], schema.get("items", {}), f"{where}[]")
        if kind == "object" or "properties" in schema:
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                return self.model(ann, schema, where)
            if origin is dict:
                values = schema.get("additionalProperties")
                if isinstance(values, dict) and values:
                    return self.annotation(get_args(ann)[1], values, f"{where}{{}}")
                return []
            return [f"{where}: the document has an object, the client {ann}"]
        return [] if not schema else [f"{where}: cannot compare {schema}"]


def flatten(ann: Any) -> list[Any]:
    if get_origin(ann) in (Union, types.UnionType):
        return [m for a in get_args(ann) for m in flatten(a)]
    return [ann]


def enum_of(schema: dict[str, Any]) -> list[Any]:
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    return []
