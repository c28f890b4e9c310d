"""The service's error answer and the web page's key cookie, shared by the API and page routes."""

from __future__ import annotations


#: Cookie holding the web page's API key (HttpOnly, SameSite=Strict).
KEY_COOKIE = "citewise_key"


class ApiError(Exception):
    """An error answered as ``{"error": {"message", "type"}}`` with ``status``."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.headers = status, message, kind, headers or {}
