"""The client keeps its token out of sight (repr, str, vars) and refuses plain HTTP to another
machine unless told ``allow_insecure_http=True``."""

from __future__ import annotations

import pickle

import httpx
import pytest

from airlock_client import Airlock, AsyncAirlock

TOKEN = "alk_SuperSecretTokenValue0123456789abcdef"


def no_token(*views: object) -> None:
    for view in views:
        assert TOKEN not in repr(view)
        assert TOKEN not in str(view)


def test_the_token_shows_in_no_repr_nor_vars() -> None:
    with Airlock("http://127.0.0.1:7420", TOKEN) as client:
        no_token(client, client.options, vars(client), vars(client.options))
        assert "token='***'" in repr(client.options)
        assert str(client.options.token) == "***"
        assert f"{client.options.token}" == "***"
        assert client.options.token.reveal() == TOKEN
        with pytest.raises(TypeError):
            vars(client.options.token)
        with pytest.raises(TypeError):
            pickle.dumps(client.options)


async def test_the_async_client_masks_it_too() -> None:
    async with AsyncAirlock("http://localhost:7420", TOKEN) as client:
        no_token(client, client.options, vars(client))


def test_the_token_is_still_sent() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"items": [], "nextCursor": None})

    with Airlock("https://airlock.example.com", TOKEN, transport=httpx.MockTransport(answer)) as c:
        c.list()
    assert seen[0].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:7420", "http://127.8.9.1", "http://localhost:1", "http://[::1]:7420"]
)
def test_plain_http_to_this_machine_is_accepted(url: str) -> None:
    Airlock(url, TOKEN).close()


@pytest.mark.parametrize(
    "url", ["http://airlock.example.com", "http://10.0.0.5:7420", "http://0.0.0.0:7420"]
)
def test_plain_http_to_another_machine_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"plain HTTP .*use https:// .*allow_insecure_http=True"):
        Airlock(url, TOKEN)
    with pytest.raises(ValueError, match="allow_insecure_http=True"):
        AsyncAirlock(url, TOKEN)


def test_plain_http_elsewhere_is_allowed_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    with Airlock("http://airlock.example.com", TOKEN, allow_insecure_http=True) as client:
        assert client.options.allow_insecure_http is True
    # The environment's URL is checked alike.
    monkeypatch.setenv("AIRLOCK_URL", "http://airlock.example.com")
    monkeypatch.setenv("AIRLOCK_TOKEN", TOKEN)
    with pytest.raises(ValueError, match="plain HTTP"):
        Airlock()
    Airlock("https://airlock.example.com").close()
