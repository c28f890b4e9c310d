"""Credentials to principals: API keys kept hashed in the index folder, and JWT bearer tokens.

The principal of a request comes only from its credential (never from the request body):

* **API keys** (``citewise keys add NAME --groups finance,support [--admin]``) look like
  ``cw_<key id>_<secret>``. ``<index>/api_keys.json`` keeps, per key, its name, groups, admin
  flag, creation/revocation times, the key id in clear (to find the entry without trying every
  hash) and the secret's **scrypt** hash (``hashlib.scrypt``, n=2**14, r=8, p=1, 64-byte output,
  16-byte random salt; the parameters are the interactive-login values recommended by the scrypt
  paper, Percival 2009, and by OWASP's password storage cheat sheet). The secret itself is
  printed once and stored nowhere. Verification compares digests with
  :func:`hmac.compare_digest`. A verified key is remembered in memory by its SHA-256 (so a busy
  client does not pay ~50 ms of scrypt per request) until the key file changes.
* **JWT bearer tokens** (OIDC access or ID tokens) checked with PyJWT: an HS256 shared secret, a
  PEM public key file or a JWKS file (RS256/ES256), optional audience and issuer; the groups come
  from a configurable claim (default ``groups``; a list or a space/comma-separated string). A
  token whose groups include :attr:`JwtConfig.admin_group` may ingest.

No credential is the anonymous principal (public documents only), unless the server requires
authentication.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from citewise.core import CitewiseError, Principal

#: File in the index folder that holds the hashed API keys.
KEYS_FILE = "api_keys.json"
#: scrypt cost parameters (Percival 2009; OWASP password storage cheat sheet: N=2^14 … 2^17, r=8, p=1).
SCRYPT_N, SCRYPT_R, SCRYPT_P, SCRYPT_LEN = 2**14, 8, 1, 64
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_KEY = re.compile(r"^cw_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})$")


class AuthError(CitewiseError):
    """A credential was given but is not valid (bad, revoked or expired); HTTP 401."""


@dataclass(frozen=True)
class Caller:
    """Who is calling: the principal used for permission filters, whether it may ingest, and how it
    authenticated (``anonymous`` | ``key`` | ``jwt``). ``key`` is the rate-limit bucket name."""

    principal: Principal
    admin: bool = False
    method: str = "anonymous"
    key: str = "anonymous"


ANONYMOUS = Caller(Principal("anonymous", ()))


def _scrypt(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(
        secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=64 * 1024 * 1024, dklen=SCRYPT_LEN
    )


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def parse_groups(text: str | None) -> tuple[str, ...]:
    """``"finance, support"`` -> ``("finance", "support")`` (sorted, unique).

    Raises:
        CitewiseError: a group name that is blank or has characters other than letters, digits,
            ``_ . : -``.
    """
    groups = set()
    for g in (text or "").split(","):
        g = g.strip()
        if not g:
            continue
        if not _GROUP.match(g):
            raise CitewiseError(f"--groups: bad group name {g!r} (letters, digits, _ . : - ; at most 64)")
        groups.add(g)
    return tuple(sorted(groups))


class KeyStore:
    """The API keys of one index (``<index>/api_keys.json``, see module docstring).

    Thread-safe; re-reads the file when it changes on disk (a key revoked by ``citewise keys
    revoke`` in another process stops working on the server's next request).
    """

    def __init__(self, index_dir: str | Path):
        self.path = Path(index_dir) / KEYS_FILE
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._keys: dict[str, dict] = {}
        self._verified: dict[str, str] = {}  # sha256(key) -> key id

    # -- file ---------------------------------------------------------------------------------
    def _load(self) -> dict[str, dict]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stamp, self._keys, self._verified = None, {}, {}
            return self._keys
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp != self._stamp:
            try:
                data = json.loads(self.path.read_text())
                keys = {k["key_id"]: k for k in data["keys"]}
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise CitewiseError(f"{self.path}: not a citewise API key file ({e})") from None
            self._stamp, self._keys, self._verified = stamp, keys, {}
        return self._keys

    def _save(self, keys: dict[str, dict]) -> None:
        tmp = self.path.with_suffix(".json.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # hashes only, still private
        with os.fdopen(fd, "w") as fh:
            json.dump(
                {
                    "format": 1,
                    "hash": f"scrypt:n={SCRYPT_N},r={SCRYPT_R},p={SCRYPT_P}",
                    "keys": sorted(keys.values(), key=lambda k: (k["name"], k["key_id"])),
                },
                fh,
                indent=2,
            )
        tmp.replace(self.path)
        self._stamp = None

    @contextmanager
    def _changing(self):
        """Hold this process's lock and an exclusive ``flock`` on ``<index>/api_keys.lock`` while
        the file is read, changed and replaced: eight concurrent ``citewise keys add`` kept only
        four keys (each read the file before the others wrote it), though all eight printed one."""
        import fcntl

        with self._lock:
            fd = os.open(self.path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    # -- management ---------------------------------------------------------------------------
    def add(self, name: str, groups: tuple[str, ...] = (), admin: bool = False) -> str:
        """Create a key and return it (the only time it exists in clear).

        Raises:
            CitewiseError: a bad name, or an active key with that name already exists.
        """
        if not _NAME.match(name or ""):
            raise CitewiseError(f"key name {name!r}: use 1-64 letters, digits, _ . - (starting with a letter or digit)")
        with self._changing():
            keys = dict(self._load())
            if any(k["name"] == name and not k.get("revoked_at") for k in keys.values()):
                raise CitewiseError(f"an active key named {name!r} exists; revoke it first or pick another name")
            key_id = secrets.token_hex(6)
            while key_id in keys:
                key_id = secrets.token_hex(6)
            secret = secrets.token_urlsafe(32)
            salt = os.urandom(16)
            keys[key_id] = {
                "key_id": key_id,
                "name": name,
                "groups": list(groups),
                "admin": bool(admin),
                "created_at": _now(),
                "revoked_at": None,
                "salt": _b64(salt),
                "hash": _b64(_scrypt(secret, salt)),
            }
            self._save(keys)
        return f"cw_{key_id}_{secret}"

    def revoke(self, name: str) -> int:
        """Revoke every active key named ``name``; returns how many.

        Raises:
            CitewiseError: no active key has that name.
        """
        with self._changing():
            keys = {k: dict(v) for k, v in self._load().items()}
            hit = [k for k in keys.values() if k["name"] == name and not k.get("revoked_at")]
            if not hit:
                raise CitewiseError(f"no active key named {name!r} (see 'citewise keys list')")
            for k in hit:
                k["revoked_at"] = _now()
            self._save(keys)
        return len(hit)

    def list(self) -> list[dict]:
        """Every key without its hash: ``name``, ``key_id``, ``groups``, ``admin``, ``created_at``,
        ``revoked_at`` (None while active), sorted by name."""
        with self._lock:
            keys = self._load()
        return sorted(
            ({k: v for k, v in e.items() if k not in ("salt", "hash")} for e in keys.values()),
            key=lambda e: (e["name"], e["created_at"]),
        )

    # -- verification -------------------------------------------------------------------------
    def verify(self, key: str) -> Caller:
        """The caller an API key stands for.

        Raises:
            AuthError: malformed, unknown or revoked key (the message does not say which).
        """
        m = _KEY.match(key or "")
        if not m:
            raise AuthError("invalid API key")
        key_id, secret = m.groups()
        digest = hashlib.sha256(key.encode()).hexdigest()
        with self._lock:
            entry = self._load().get(key_id)
            if entry is None or entry.get("revoked_at"):
                raise AuthError("invalid API key")
            if self._verified.get(digest) != key_id:
                want = base64.b64decode(entry["hash"])
                if not hmac.compare_digest(_scrypt(secret, base64.b64decode(entry["salt"])), want):
                    raise AuthError("invalid API key")
                self._verified[digest] = key_id
        return Caller(
            Principal(f"key:{entry['name']}", tuple(entry["groups"])),
            admin=bool(entry["admin"]),
            method="key",
            key=f"key:{entry['key_id']}",
        )


@dataclass
class JwtConfig:
    """How bearer JWTs are checked (PyJWT).

    Exactly one of ``secret`` (HS256), ``public_key_file`` (PEM) or ``jwks_file`` (a JWKS JSON
    document, keys chosen by the token's ``kid``). ``groups_claim``: claim holding the groups
    (dotted path for nested claims, e.g. ``realm_access.roles``). ``admin_group``: members may
    ingest. ``audience``/``issuer``: checked when set. ``leeway_s``: clock skew allowed, seconds.
    """

    secret: str | None = None
    public_key_file: str | None = None
    jwks_file: str | None = None
    algorithms: tuple[str, ...] = ()
    groups_claim: str = "groups"
    admin_group: str = "citewise-admin"
    audience: str | None = None
    issuer: str | None = None
    leeway_s: float = 30.0
    _keys: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        given = [x for x in (self.secret, self.public_key_file, self.jwks_file) if x]
        if len(given) != 1:
            raise CitewiseError("JWT: give exactly one of a shared secret, a public key file or a JWKS file")
        if not self.algorithms:
            self.algorithms = ("HS256",) if self.secret else ("RS256", "ES256")
        import jwt

        if self.public_key_file:
            try:
                self._keys[None] = Path(self.public_key_file).read_text()
            except OSError as e:
                raise CitewiseError(f"{self.public_key_file}: cannot read the JWT public key ({e.strerror})") from None
        if self.jwks_file:
            try:
                jwks = jwt.PyJWKSet.from_json(Path(self.jwks_file).read_text())
            except (OSError, jwt.PyJWTError, ValueError) as e:
                raise CitewiseError(f"{self.jwks_file}: not a usable JWKS file ({e})") from None
            for k in jwks.keys:
                self._keys[k.key_id] = k.key

    def verify(self, token: str) -> Caller:
        """The caller a bearer token stands for (subject ``sub`` as the name).

        Raises:
            AuthError: bad signature, expired, wrong audience/issuer, unknown ``kid``, or a
                groups claim that is neither a list of strings nor a string.
        """
        import jwt

        try:
            if self.secret:
                key = self.secret
            elif self.jwks_file:
                kid = jwt.get_unverified_header(token).get("kid")
                if kid not in self._keys:
                    raise AuthError("invalid bearer token (unknown key id)")
                key = self._keys[kid]
            else:
                key = self._keys[None]
            claims = jwt.decode(
                token,
                key,
                algorithms=list(self.algorithms),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": ["exp", "sub"], "verify_aud": self.audience is not None},
            )
        except jwt.PyJWTError as e:
            raise AuthError(f"invalid bearer token ({e})") from None
        value = claims
        for part in self.groups_claim.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            groups: tuple[str, ...] = ()
        elif isinstance(value, str):
            groups = tuple(sorted({g for g in re.split(r"[\s,]+", value) if g}))
        elif isinstance(value, list) and all(isinstance(g, str) for g in value):
            groups = tuple(sorted(set(value)))
        else:
            raise AuthError(f"invalid bearer token (claim {self.groups_claim!r} is not a list of group names)")
        return Caller(
            Principal(f"jwt:{claims['sub']}", groups),
            admin=self.admin_group in groups,
            method="jwt",
            key=f"jwt:{claims['sub']}",
        )


class Authenticator:
    """Turns the ``Authorization`` header (or the web page's key cookie) into a :class:`Caller`.

    ``Authorization: Bearer cw_…`` or ``X-API-Key: cw_…`` is an API key; any other bearer token is
    a JWT (when ``jwt`` is configured). No credential: :data:`ANONYMOUS`, or :class:`AuthRequired`
    when ``require_auth``.
    """

    def __init__(self, keys: KeyStore, jwt: JwtConfig | None = None, require_auth: bool = False):
        self.keys = keys
        self.jwt = jwt
        self.require_auth = require_auth

    def from_credential(self, credential: str | None) -> Caller:
        """The caller for a raw credential (API key or JWT), or anonymous for None/empty.

        Raises:
            AuthRequired: no credential and ``require_auth``.
            AuthError: an invalid credential (never silently anonymous).
        """
        if not credential:
            if self.require_auth:
                raise AuthRequired("authentication required: send 'Authorization: Bearer <API key or token>'")
            return ANONYMOUS
        if credential.startswith("cw_"):
            return self.keys.verify(credential)
        if self.jwt is None:
            raise AuthError("invalid API key")
        return self.jwt.verify(credential)

    def from_headers(self, authorization: str | None, api_key: str | None = None) -> Caller:
        """The caller of a request from its ``Authorization`` and ``X-API-Key`` headers.

        Raises:
            AuthRequired, AuthError: see :meth:`from_credential`; also a non-Bearer scheme.
        """
        cred = None
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise AuthError("unsupported Authorization scheme (use 'Bearer <API key or token>')")
            cred = value.strip()
        elif api_key:
            cred = api_key.strip()
        return self.from_credential(cred)


class AuthRequired(AuthError):
    """No credential on a server that requires one; HTTP 401."""
