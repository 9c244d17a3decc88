"""AWS Lambda entry point of Python function steps: runtime python3.12, handler `stepforge_lambda.handler`.

The Python counterpart of the Node function handler (packages/runtime/src/handlers/function.ts over
steps/functionStep.ts and runtime/executeStep.ts), for the function steps whose function is a
Python module: it takes the same step envelope, answers the same StepResult, records the step on
the same DynamoDB items (the run table's `RUN#<run>` / `STEP#<instance>` record, with its
idempotency record under `idem`), stores large outputs as the same `BLOB#` chunks, resolves
`$secret:` references from the same places and redacts their values from everything it writes,
returns, raises or logs. A committed output is returned (`reused`) instead of calling the function
again. What it leaves out, being a claim-first port: the late claim (every attempt claims before
it runs the function) and the embedded stack's lease generations (it only runs on Lambda).

The Lambda Python runtime ships boto3, which this uses for DynamoDB, Secrets Manager and SSM.
Without boto3 (a local python3, in the tests) it speaks DynamoDB's JSON protocol to a loopback
emulator given by STEPFORGE_DYNAMODB_ENDPOINT, unsigned, and refuses any other endpoint.
"""
import asyncio
import base64
import datetime
import decimal
import hashlib
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import stepforge_userfn

# Kept equal to the compiler's envelope limits (packages/contract/src/envelope.ts).
INLINE_OUTPUT_MAX_BYTES = 4 * 1024
STATE_READ_OUTPUT_MAX_BYTES = 32 * 1024
LAMBDA_STEP_KINDS = ("model", "agent", "tool", "connector", "function", "mcp_tool")
SECRET_PREFIX = "$secret:"
SECRET_ID = re.compile(r"^[A-Za-z0-9_.\-/]+$")
# Bytes of JSON per BLOB# chunk: DynamoDB items are capped at 400 KB.
BLOB_CHUNK_BYTES = 300000


# ---- the stable error names (packages/runtime/src/errors/RuntimeError.ts): the Lambda runtime reports the class name ----


class StepError(Exception):
    """A failure with a stable name: Step Functions' Retry/Catch match the class name as the error."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.details = details or {}


class InvalidEnvelope(StepError):
    pass


class FunctionError(StepError):
    pass


class ConfigError(StepError):
    pass


class PolicyDenied(StepError):
    pass


class SecretNotFound(StepError):
    pass


class OutputTooLarge(StepError):
    pass


class NotFound(StepError):
    pass


class StepInProgress(StepError):
    pass


class StepOutcomeUnknown(StepError):
    pass


class IdempotencyLeaseLostError(Exception):
    pass


# ---- configuration (the subset of packages/runtime/src/config/RuntimeConfig.ts this handler reads) ----------------------


def _int_env(env, name, default):
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        n = float(raw)
    except ValueError:
        n = -1
    if n < 0 or n != n:
        raise ConfigError('%s must be a non-negative number, got "%s"' % (name, raw))
    return int(n)


class Config:
    def __init__(self, env):
        on_lambda = "AWS_LAMBDA_FUNCTION_NAME" in env
        mode = env.get("STEPFORGE_MODE") or ("aws" if on_lambda else "embedded")
        cwd = os.getcwd()
        self.table = env.get("STEPFORGE_TABLE") or env.get("RUNS_TABLE_NAME") or "stepforge-runs"
        self.region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        self.endpoints = {
            "dynamodb": env.get("STEPFORGE_DYNAMODB_ENDPOINT"),
            "secretsmanager": env.get("STEPFORGE_SECRETSMANAGER_ENDPOINT"),
            "ssm": env.get("STEPFORGE_SSM_ENDPOINT"),
        }
        self.secrets_backend = env.get("STEPFORGE_SECRETS_BACKEND") or ("secretsmanager" if mode == "aws" else "env")
        if self.secrets_backend not in ("env", "secretsmanager", "ssm"):
            raise ConfigError('STEPFORGE_SECRETS_BACKEND must be one of env, secretsmanager, ssm, got "%s"' % self.secrets_backend)
        self.secrets_file = env.get("STEPFORGE_SECRETS_FILE") or os.path.join(cwd, ".stepforge", "secrets.json")
        self.ssm_prefix = env.get("STEPFORGE_SSM_PREFIX") or "/stepforge/"
        self.functions_dir = env.get("STEPFORGE_FUNCTIONS_DIR") or os.path.join(cwd, "functions", "user")
        self.inline_max = _int_env(env, "STEPFORGE_INLINE_OUTPUT_MAX_BYTES", INLINE_OUTPUT_MAX_BYTES)
        if self.inline_max > INLINE_OUTPUT_MAX_BYTES:
            raise ConfigError("STEPFORGE_INLINE_OUTPUT_MAX_BYTES must be at most %d, got %d" % (INLINE_OUTPUT_MAX_BYTES, self.inline_max))
        self.max_envelope = _int_env(env, "STEPFORGE_MAX_ENVELOPE_BYTES", 256 * 1024)
        self.lease_seconds = _int_env(env, "STEPFORGE_LEASE_SECONDS", 900)
        self.ttl_seconds = _int_env(env, "STEPFORGE_IDEMPOTENCY_TTL_SECONDS", 7 * 24 * 3600)
        self.log_level = env.get("STEPFORGE_LOG_LEVEL") or "INFO"
        self.service = env.get("POWERTOOLS_SERVICE_NAME") or "stepforge"
        self.env = env


# ---- JSON as the Node runtime writes it (hashes and sizes must agree) -----------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(x):
    """A number as JavaScript's Number#toString (and JSON.stringify) writes it."""
    if isinstance(x, int) and abs(x) < 10 ** 21:
        return str(x)
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    t = decimal.Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(str(d) for d in t.digits)
    k = len(digits)
    n = k + t.exponent
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def js_string(s):
    text = json.dumps(s, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group(0)), text)


def stable_json(v):
    """executeStep's stableJson: JSON with sorted keys, numbers and strings as JavaScript writes them."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, str):
        return js_string(v)
    if isinstance(v, list):
        return "[" + ",".join(stable_json(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join("%s:%s" % (js_string(k), stable_json(v[k])) for k in sorted(v, key=_utf16_key)) + "}"
    raise TypeError("not a JSON value: %r" % (v,))


def _utf16_key(k):
    # JavaScript's sort compares UTF-16 code units.
    return k.encode("utf-16-be", "surrogatepass")


def js_json(v):
    """JSON.stringify(v): key order as given."""
    if isinstance(v, dict):
        return "{" + ",".join("%s:%s" % (js_string(k), js_json(x)) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(js_json(x) for x in v) + "]"
    return stable_json(v)


def utf8_len(text):
    return len(text.encode("utf-8", "surrogatepass"))


# ---- redaction (packages/runtime/src/secrets/Redactor.ts) --------------------------------------------------------------------

REDACTED = "***"


def _base64_fragments(value):
    """The secret's bytes as base64 at each alignment inside a longer encoded text: only the characters every bit of which is the secret's."""
    data = value.encode("utf-8", "surrogatepass")
    out = []
    for k in range(3):
        b64 = base64.b64encode(b"\0" * k + data).decode("ascii").rstrip("=")
        fragment = b64[-(-8 * k // 6):(8 * (k + len(data))) // 6]
        out += [fragment, fragment.replace("+", "-").replace("/", "_")]
    return out


def secret_encodings(value):
    """Every spelling in which `value` can reach a stored or printed text (as Redactor.ts's secretEncodings): as it is;
    JSON-escaped once and twice, with and without non-ASCII as \\uXXXX; URL-encoded as a component, a path, a query and a
    form, with upper- or lower-case hex; base64 and base64url, whole and at any alignment inside a longer encoding."""
    js = json.dumps(value, ensure_ascii=False)[1:-1]
    ascii_js = json.dumps(value)[1:-1]
    quote = urllib.parse.quote
    urlish = [quote(value, safe=""), quote(value, safe="!'()*~"), quote(value, safe=";/?:@&=+$,#!'()*~"), quote(value, safe="/"),
              urllib.parse.quote_plus(value, safe=""), urllib.parse.quote_plus(value, safe="*")]
    urlish += [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), u) for u in urlish]
    data = value.encode("utf-8", "surrogatepass")
    b64 = base64.b64encode(data).decode("ascii")
    every = [value, js, ascii_js, json.dumps(js, ensure_ascii=False)[1:-1], json.dumps(ascii_js)[1:-1], *urlish,
             b64, b64.rstrip("="), base64.urlsafe_b64encode(data).decode("ascii").rstrip("="),
             *(_base64_fragments(value) if len(value) >= 8 else [])]
    seen = []
    for v in every:
        if len(v) >= min(4, len(value)) and v not in seen:
            seen.append(v)
    return seen


def secret_url_parts(value):
    """The parts of a secret that is a URL a record may hold without the rest (as Redactor.ts's secretUrlParts): the URL
    without its query, its path and query, its credentials; never the origin alone (a public host)."""
    try:
        u = urllib.parse.urlsplit(value.strip())
    except ValueError:
        return []
    if not u.scheme or not u.netloc:
        return []
    origin = "%s://%s" % (u.scheme.lower(), u.hostname or "") + (":%d" % u.port if u.port else "")
    path_query = u.path + ("?" + u.query if u.query else "")
    parts = [origin + u.path, path_query, "?" + u.query if u.query else "", urllib.parse.unquote(u.username or ""),
             urllib.parse.unquote(u.password or ""), u.path]
    return [p for p in parts if len(p) >= 8 and p not in (origin, origin + "/", "/")]


class Redactor:
    def __init__(self):
        self._values = set()
        self._spellings = []

    def add(self, value):
        if value and value not in self._values:
            self._values.add(value)
            forms = [e for v in [value, *secret_url_parts(value)] for e in secret_encodings(v)]
            self._spellings = sorted(set(self._spellings) | set(forms), key=len, reverse=True)

    def text(self, text):
        if not self._values or not isinstance(text, str):
            return text
        for v in self._spellings:
            if v in text:
                text = text.replace(v, REDACTED)
        return text

    def redact(self, value, depth=0):
        if not self._values or depth > 64:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.redact(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.redact(v, depth + 1) for k, v in value.items()}
        return value


class _RedactingStream:
    """Output nobody captured (printed outside a call, by a thread): redacted on its way to CloudWatch."""

    def __init__(self, stream, redactor):
        self._stream = stream
        self._redactor = redactor

    def write(self, text):
        self._stream.write(self._redactor.text(text))
        return len(text)

    def flush(self):
        self._stream.flush()

    def fileno(self):
        return self._stream.fileno()


# ---- AWS clients ------------------------------------------------------------------------------------------------------


class AwsError(Exception):
    """An AWS error answer; `response` is shaped as botocore's ClientError.response."""

    def __init__(self, code, message, item=None):
        super().__init__("%s: %s" % (code, message))
        self.response = {"Error": {"Code": code, "Message": message}}
        if item is not None:
            self.response["Item"] = item


def error_code(e):
    return ((getattr(e, "response", None) or {}).get("Error") or {}).get("Code")


class LoopbackDynamoDB:
    """DynamoDB's JSON protocol to an emulator on loopback (dynalite, DynamoDB Local): for running without boto3."""

    def __init__(self, endpoint, region):
        host = urllib.parse.urlparse(endpoint).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(
                "boto3 is not installed and STEPFORGE_DYNAMODB_ENDPOINT (%s) is not a loopback emulator: "
                "requests to it would go unsigned; install boto3, or point it at 127.0.0.1" % endpoint)
        self._url = endpoint.rstrip("/") + "/"
        self._region = region

    def _send(self, op, body):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        request = urllib.request.Request(self._url, data=json.dumps(body).encode("utf-8"), method="POST", headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810." + op,
            "X-Amz-Date": stamp,
            "Authorization": "AWS4-HMAC-SHA256 Credential=local/%s/%s/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=%s"
            % (stamp[:8], self._region, "0" * 64),
        })
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            payload = json.loads(e.read() or b"{}")
            code = str(payload.get("__type", "UnknownError")).split("#")[-1]
            raise AwsError(code, payload.get("message") or payload.get("Message") or "", payload.get("Item")) from None

    def put_item(self, **kw):
        return self._send("PutItem", kw)

    def update_item(self, **kw):
        return self._send("UpdateItem", kw)

    def get_item(self, **kw):
        return self._send("GetItem", kw)

    def query(self, **kw):
        return self._send("Query", kw)

    def delete_item(self, **kw):
        return self._send("DeleteItem", kw)


def aws_client(config, service):
    try:
        import boto3  # in the Lambda Python runtime
    except ImportError:
        boto3 = None
    endpoint = config.endpoints.get(service)
    if boto3 is not None:
        return boto3.client(service, region_name=config.region, **({"endpoint_url": endpoint} if endpoint else {}))
    if service == "dynamodb" and endpoint:
        return LoopbackDynamoDB(endpoint, config.region)
    raise ConfigError("boto3 is not installed: %s cannot be reached (it is part of the Lambda Python runtime)" % service)


# ---- DynamoDB values (packages/runtime/src/persistence/Db.ts) ------------------------------------------------------------------


def marshall(item):
    return {k: _marshall_value(v) for k, v in item.items()}


def _marshall_value(v):
    if v is None:
        return {"NULL": True}
    if isinstance(v, bool):
        return {"BOOL": v}
    if isinstance(v, (int, float)):
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise ValueError("cannot store the number %r in DynamoDB" % v)
        return {"N": js_number(v)}
    if isinstance(v, str):
        return {"S": v}
    if isinstance(v, list):
        return {"L": [_marshall_value(x) for x in v]}
    if isinstance(v, dict):
        return {"M": marshall(v)}
    raise TypeError("cannot store %r in DynamoDB" % (v,))


def unmarshall(item):
    return {k: _unmarshall_value(v) for k, v in (item or {}).items()}


def _unmarshall_value(av):
    if "S" in av:
        return av["S"]
    if "N" in av:
        n = av["N"]
        return int(n) if re.match(r"^-?\d+$", n) else float(n)
    if "BOOL" in av:
        return av["BOOL"]
    if "NULL" in av:
        return None
    if "M" in av:
        return unmarshall(av["M"])
    if "L" in av:
        return [_unmarshall_value(x) for x in av["L"]]
    if "SS" in av:
        return list(av["SS"])
    if "NS" in av:
        return [float(x) for x in av["NS"]]
    return None


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000.0, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


# ---- the step handler -----------------------------------------------------------------------------------------------------


class Runtime:
    """What one Lambda container keeps between invocations: configuration, clients, the redactor, the function runner."""

    def __init__(self, env=None):
        self.config = Config(dict(os.environ) if env is None else env)
        self.redactor = Redactor()
        self._clients = {}
        self._secrets = {}
        self._file_secrets = None
        self.runner = stepforge_userfn.FunctionRunner(self.config.functions_dir)
        # A function's module imports its neighbours (`import helpers`) from the functions folder, after
        # the standard library and the runtime's own packages, as the embedded worker lets it.
        if self.runner.root not in sys.path:
            sys.path.append(self.runner.root)
        self.loop = asyncio.new_event_loop()
        self.clock = lambda: int(time.time() * 1000)

    def client(self, service):
        if service not in self._clients:
            self._clients[service] = aws_client(self.config, service)
        return self._clients[service]

    # -- logging (JSON lines, redacted last, as the Node runtime's Powertools logger) --

    def log(self, level, message, fields):
        order = ["DEBUG", "INFO", "WARN", "ERROR"]
        wanted = self.config.log_level
        if wanted == "SILENT" or (wanted in order and order.index(level) < order.index(wanted)):
            return
        line = {"level": level, "message": message, "timestamp": iso(self.clock()), "service": self.config.service}
        line.update(fields)
        sys.__stdout__.write(json.dumps(self.redactor.redact(line), ensure_ascii=False) + "\n")
        sys.__stdout__.flush()

    # -- secrets (packages/runtime/src/secrets/SecretResolver.ts) --

    def secret(self, sid):
        if not SECRET_ID.match(sid):
            raise SecretNotFound('invalid secret id "%s"' % sid)
        if sid in self._secrets:
            return self._secrets[sid]
        value = self._lookup(sid)
        if value is None:
            raise SecretNotFound('secret "%s" is not defined (%s)' % (sid, self._where(sid)), {"secret": sid})
        if len(value) < 4:
            raise SecretNotFound('secret "%s" is shorter than 4 characters; refusing to use it' % sid, {"secret": sid})
        self.redactor.add(value)
        self._secrets[sid] = value
        return value

    def resolve_deep(self, value):
        if isinstance(value, str) and value.startswith(SECRET_PREFIX):
            return self.secret(value[len(SECRET_PREFIX):])
        if isinstance(value, list):
            return [self.resolve_deep(v) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve_deep(v) for k, v in value.items()}
        return value

    def _where(self, sid):
        backend = self.config.secrets_backend
        if backend == "secretsmanager":
            return 'Secrets Manager secret "%s"' % sid
        if backend == "ssm":
            return 'SSM parameter "%s%s"' % (self.config.ssm_prefix, sid)
        return "set %s or add \"%s\" to %s" % (secret_env_name(sid), sid, self.config.secrets_file)

    def _lookup(self, sid):
        backend = self.config.secrets_backend
        if backend == "secretsmanager":
            try:
                return self.client("secretsmanager").get_secret_value(SecretId=sid).get("SecretString")
            except Exception as e:
                if error_code(e) == "ResourceNotFoundException":
                    return None
                raise
        if backend == "ssm":
            try:
                return self.client("ssm").get_parameter(Name=self.config.ssm_prefix + sid, WithDecryption=True)["Parameter"].get("Value")
            except Exception as e:
                if error_code(e) == "ParameterNotFound":
                    return None
                raise
        value = self.config.env.get(secret_env_name(sid))
        if value is not None:
            return value
        if self._file_secrets is None:
            try:
                with open(self.config.secrets_file, encoding="utf-8") as f:
                    self._file_secrets = json.load(f)
            except FileNotFoundError:
                self._file_secrets = {}
            except (OSError, ValueError) as e:
                raise ConfigError("cannot read %s: %s" % (self.config.secrets_file, e)) from None
        value = self._file_secrets.get(sid)
        return value if isinstance(value, str) else None


def secret_env_name(sid):
    return "STEPFORGE_SECRET_" + re.sub(r"[^A-Z0-9]", "_", sid.upper())


# ---- the envelope (packages/contract/src/envelope.ts) ----------------------------------------------------------


def validate_envelope(rt, event):
    size = utf8_len(js_json(event)) if _is_json(event) else 0
    if size > rt.config.max_envelope:
        raise InvalidEnvelope("step envelope is %d bytes, over the %d-byte limit" % (size, rt.config.max_envelope), {"bytes": size, "limit": rt.config.max_envelope})
    issues = []

    def need(ok, path, message):
        if not ok and len(issues) < 10:
            issues.append("%s: %s" % (path, message))

    if not isinstance(event, dict):
        raise InvalidEnvelope("malformed step envelope: (envelope): expected an object", {"issues": ["(envelope): expected an object"]})
    need(event.get("version") in (1, 2) and not isinstance(event.get("version"), bool), "version", "expected 1 or 2")
    run, step = event.get("run"), event.get("step")
    need(isinstance(run, dict), "run", "expected an object")
    need(isinstance(step, dict), "step", "expected an object")
    run = run if isinstance(run, dict) else {}
    step = step if isinstance(step, dict) else {}
    for path, v in (("run.id", run.get("id")), ("run.workflow", run.get("workflow")), ("step.id", step.get("id")), ("step.identity", step.get("identity"))):
        need(isinstance(v, str) and v != "", path, "expected a non-empty string")
    need(step.get("kind") in LAMBDA_STEP_KINDS, "step.kind", "expected one of " + ", ".join(LAMBDA_STEP_KINDS))
    iteration = step.get("iteration", [])
    need(isinstance(iteration, list) and all(_non_negative_int(i) for i in iteration), "step.iteration", "expected a list of non-negative integers")
    need(step.get("role") is None or isinstance(step.get("role"), str), "step.role", "expected a string")
    need(isinstance(event.get("config"), dict), "config", "expected an object")
    inputs = event.get("inputs")
    need(isinstance(inputs, dict), "inputs", "expected an object")
    inputs = inputs if isinstance(inputs, dict) else {}
    need(isinstance(inputs.get("steps", {}), dict), "inputs.steps", "expected an object")
    for field in ("tools", "secrets"):
        v = event.get(field, [])
        need(isinstance(v, list) and all(isinstance(x, str) for x in v), field, "expected a list of strings")
    need(event.get("attempt") is None or _non_negative_int(event.get("attempt")), "attempt", "expected a non-negative integer")
    need(event.get("readByStateMachine") in (None, True), "readByStateMachine", "expected true")
    limit = event.get("inlineOutputMaxBytes")
    need(limit is None or (_non_negative_int(limit) and limit > 0), "inlineOutputMaxBytes", "expected a positive integer")
    if issues:
        raise InvalidEnvelope("malformed step envelope: " + "; ".join(issues), {"issues": issues})
    # As the zod schema parses it: defaults applied, unknown input fields dropped.
    kept = {k: inputs[k] for k in ("value", "template", "steps", "input", "candidates") if k in inputs}
    kept.setdefault("steps", {})
    step = dict(step)
    step.setdefault("iteration", [])
    return dict(event, run=run, step=step, inputs=kept, tools=event.get("tools", []), secrets=event.get("secrets", []))


def _non_negative_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_json(v):
    try:
        js_json(v)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


def step_instance_id(env, sub=None):
    sid = env["step"]["id"]
    if env["step"]["iteration"]:
        sid += "[%s]" % ",".join(str(i) for i in env["step"]["iteration"])
    if env["step"].get("role"):
        sid += ":" + env["step"]["role"]
    if sub:
        sid += "#" + sub
    return sid


def step_idempotency_key(env, sub=None):
    """executeStep's stepIdempotencyKey: `<run>:<step instance>:<24 hex of sha256(identity, config, inputs, toolCall, turn)>`."""
    turn = env.get("turn")
    payload = {
        "identity": env["step"]["identity"], "config": env["config"], "inputs": env["inputs"],
        "toolCall": env.get("toolCall"), "turn": turn.get("index") if isinstance(turn, dict) else None,
    }
    digest = hashlib.sha256(stable_json(payload).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return "%s:%s:%s" % (env["run"]["id"], step_instance_id(env, sub), digest)


# ---- large outputs (packages/runtime/src/persistence/BlobStore.ts) -------------------------------------------------------------------

_REF_IN_TEXT = re.compile(r'\{"\$ref":\{"ref":"(?:[^"\\]|\\.)*","bytes":\d+,"sha256":"[0-9a-f]{64}"\}\}')
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def is_ref_value(v):
    if not isinstance(v, dict) or "$ref" not in v:
        return False
    r = v["$ref"]
    return (isinstance(r, dict) and isinstance(r.get("ref"), str) and r.get("ref") != "" and _non_negative_int(r.get("bytes"))
            and isinstance(r.get("sha256"), str) and bool(_SHA256.match(r["sha256"])))


class Blobs:
    def __init__(self, rt):
        self.rt = rt

    def maybe_store(self, value, max_inline):
        text = js_json(value)
        if utf8_len(text) <= max_inline:
            return value, None
        ref = self.put(text)
        return {"$ref": ref}, ref

    def put(self, text):
        safe = self.rt.redactor.text(text)
        data = safe.encode("utf-8", "surrogatepass")
        sha = hashlib.sha256(data).hexdigest()
        chunks = _utf8_chunks(safe, BLOB_CHUNK_BYTES)
        ddb = self.rt.client("dynamodb")
        for i, part in enumerate(chunks):
            ddb.put_item(TableName=self.rt.config.table, Item=marshall({"pk": "BLOB#" + sha, "sk": "CHUNK#%05d" % i, "data": part, "chunks": len(chunks)}))
        return {"ref": "dynamodb:%s/BLOB#%s" % (self.rt.config.table, sha), "bytes": len(data), "sha256": sha}

    def get(self, ref):
        parts, expected, start = [], 0, None
        ddb = self.rt.client("dynamodb")
        while True:
            kw = {"TableName": self.rt.config.table, "KeyConditionExpression": "pk = :pk",
                  "ExpressionAttributeValues": {":pk": {"S": "BLOB#" + ref["sha256"]}}, "ConsistentRead": True}
            if start:
                kw["ExclusiveStartKey"] = start
            r = ddb.query(**kw)
            for it in r.get("Items", []):
                item = unmarshall(it)
                parts.append(str(item.get("data")))
                expected = int(item.get("chunks", 0))
            start = r.get("LastEvaluatedKey")
            if not start:
                break
        if not parts or len(parts) != expected:
            raise NotFound("stored output %s is missing or incomplete (%d/%d chunks)" % (ref["ref"], len(parts), expected))
        return json.loads("".join(parts))

    def resolve_refs(self, value, depth=0):
        if depth > 64:
            return value
        if isinstance(value, str):
            return self._refs_in_text(value) if '{"$ref":{"ref":' in value else value
        if is_ref_value(value):
            return self.get(value["$ref"])
        if isinstance(value, list):
            return [self.resolve_refs(v, depth + 1) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve_refs(v, depth + 1) for k, v in value.items()}
        return value

    def _refs_in_text(self, text):
        out, last = [], 0
        for m in _REF_IN_TEXT.finditer(text):
            parsed = json.loads(m.group(0))
            if not is_ref_value(parsed):
                continue
            stored = self.get(parsed["$ref"])
            out.append(text[last:m.start()])
            out.append(stored if isinstance(stored, str) else js_json(stored))
            last = m.end()
        return text if last == 0 else "".join(out) + text[last:]


def _utf8_chunks(text, limit):
    """`text` cut into pieces of at most `limit` UTF-8 bytes, never inside a character."""
    chunks, current, size = [], [], 0
    for ch in text:
        n = utf8_len(ch)
        if size + n > limit and current:
            chunks.append("".join(current))
            current, size = [], 0
        current.append(ch)
        size += n
    chunks.append("".join(current))
    return chunks


# ---- step records and their idempotency records (RunStore, StepRecordPersistenceLayer, runIdempotent) ----------------------

STEP_KEY = re.compile(r"^([^:]+):(.+):([0-9a-f]{24})$")


class Steps:
    """The step record of one step instance, with the idempotency record of its key under `idem` (or on `IDEM#<key>`)."""

    def __init__(self, rt, run_id, step_id, key):
        self.rt = rt
        self.ddb = rt.client("dynamodb")
        self.table = rt.config.table
        self.run_id, self.step_id, self.key = run_id, step_id, key
        self.step_key = marshall({"pk": "RUN#" + run_id, "sk": "STEP#" + step_id})
        self.idem_key = marshall({"pk": "IDEM#" + key, "sk": "IDEM"})
        # Where this attempt's claim lives: the step record ('step') or an IDEM# item ('idem').
        self.where = None

    def _conditional(self, write, **kw):
        """Runs a conditional write: None when it succeeded, else the item that failed the condition (read if not returned)."""
        try:
            write(**kw)
            return None
        except Exception as e:
            if error_code(e) != "ConditionalCheckFailedException":
                raise
            item = (getattr(e, "response", None) or {}).get("Item")
            if item is not None:
                return unmarshall(item)
            # dynalite predates ReturnValuesOnConditionCheckFailure: there, and only there, read it.
            got = self.ddb.get_item(TableName=self.table, Key=kw["Key"] if "Key" in kw else {"pk": kw["Item"]["pk"], "sk": kw["Item"]["sk"]}, ConsistentRead=True)
            return unmarshall(got.get("Item")) if got.get("Item") else {}

    def claim(self, lease_id, now_ms, idempotent):
        """Claims the key for this attempt; returns the committed record instead when another attempt committed it."""
        expires_at = now_ms // 1000 + self.rt.config.ttl_seconds
        idem = {"key": self.key, "status": "INPROGRESS", "expiresAt": expires_at, "leaseExpiresAt": now_ms + self.rt.config.lease_seconds * 1000,
                "leaseId": lease_id, "idempotent": idempotent}
        now = iso(now_ms)
        created = self._conditional(self.ddb.put_item, TableName=self.table, Item=marshall({
            "pk": "RUN#" + self.run_id, "sk": "STEP#" + self.step_id, "type": "step", "runId": self.run_id, "stepId": self.step_id,
            "status": "RUNNING", "attempts": 1, "startedAt": now, "idem": idem,
        }), ConditionExpression="attribute_not_exists(pk)", ReturnValuesOnConditionCheckFailure="ALL_OLD")
        if created is None:
            self.where = "step"
            return None
        first = created.get("idem")
        if isinstance(first, dict) and first.get("key") == self.key and first.get("status") == "COMPLETED" and first.get("expiresAt", 0) * 1000 >= now_ms:
            return self._conflict(first, now_ms)
        mine = "idem.#key = :key AND"
        takeover = "%s idem.#status = :inprogress AND idem.leaseExpiresAt < :nowMs%s" % (mine, "" if idempotent else " AND attribute_not_exists(idem.dispatchedAt)")
        old = self._conditional(
            self.ddb.update_item, TableName=self.table, Key=self.step_key,
            UpdateExpression="SET idem = :idem, #status = :running, startedAt = if_not_exists(startedAt, :now), runId = :run, stepId = :step, #type = :type ADD attempts :one",
            ConditionExpression="attribute_not_exists(idem) OR %s idem.expiresAt < :nowS OR %s" % (mine, takeover),
            ExpressionAttributeNames={"#key": "key", "#status": "status", "#type": "type"},
            ExpressionAttributeValues=marshall({
                ":idem": idem, ":running": "RUNNING", ":now": now, ":run": self.run_id, ":step": self.step_id, ":type": "step", ":one": 1,
                ":key": self.key, ":nowS": now_ms // 1000, ":nowMs": now_ms, ":inprogress": "INPROGRESS",
            }),
            ReturnValuesOnConditionCheckFailure="ALL_OLD")
        if old is None:
            self.where = "step"
            return None
        held = old.get("idem")
        if isinstance(held, dict) and held.get("key") == self.key:
            return self._conflict(held, now_ms)
        if held is None:
            return self.claim(lease_id, now_ms, idempotent)
        # Another key's record is on this step record: keep it, and claim this key on its own item.
        takeover = "#status = :inprogress AND #lease < :nowMs" + ("" if idempotent else " AND attribute_not_exists(dispatchedAt)")
        held = self._conditional(self.ddb.put_item, TableName=self.table, Item=marshall({
            "pk": "IDEM#" + self.key, "sk": "IDEM", "key": self.key, "status": "INPROGRESS", "expiresAt": expires_at, "ttl": expires_at,
            "leaseExpiresAt": idem["leaseExpiresAt"], "leaseId": lease_id, "runId": self.run_id, "stepId": self.step_id, "idempotent": idempotent,
        }), ConditionExpression="attribute_not_exists(pk) OR expiresAt < :nowS OR " + takeover,
            ExpressionAttributeNames={"#status": "status", "#lease": "leaseExpiresAt"},
            ExpressionAttributeValues=marshall({":nowS": now_ms // 1000, ":nowMs": now_ms, ":inprogress": "INPROGRESS"}),
            ReturnValuesOnConditionCheckFailure="ALL_OLD")
        if held is not None:
            return self._conflict(held, now_ms)
        self.where = "idem"
        self.step_started(now_ms)
        return None

    def _conflict(self, held, now_ms):
        """runIdempotent's rule for a record it could not claim: committed → reuse; dispatched and lapsed → unknown; else in progress."""
        if held.get("expiresAt", 0) * 1000 >= now_ms and held.get("status") == "COMPLETED":
            return held
        if held.get("dispatchedAt") is not None and held.get("leaseExpiresAt", 0) < now_ms:
            target = held.get("dispatchTarget") or "an external service"
            raise StepOutcomeUnknown(
                "step %s called %s at %s and never recorded the outcome (the process died or the call timed out). It is not repeated "
                "automatically because the call is not idempotent: check %s for that request, then either mark the step done or clear it "
                "and retry (idempotency key %s)." % (self.step_id, target, iso(int(held["dispatchedAt"])), target, self.key),
                {"key": self.key, "target": target, "dispatchedAt": held["dispatchedAt"], "runId": self.run_id, "stepId": self.step_id})
        raise StepInProgress("step %s is already running in another attempt (lease until %s)" % (self.step_id, iso(int(held.get("leaseExpiresAt", 0)))),
                             {"key": self.key, "leaseExpiresAt": held.get("leaseExpiresAt")})

    def commit(self, lease_id, committed, now_ms):
        """Saves COMPLETED with the committed value, and the step record's end in the same write."""
        expires_at = now_ms // 1000 + self.rt.config.ttl_seconds
        output = self.rt.redactor.redact(committed)
        if self.where == "idem":
            self._lease_update(self.idem_key, lease_id, "SET #status = :completed, #output = :output, expiresAt = :exp, #ttl = :exp, completedAt = :now",
                               {":completed": "COMPLETED", ":output": output, ":exp": expires_at, ":now": now_ms},
                               {"#status": "status", "#output": "output", "#ttl": "ttl"}, "leaseId = :lease")
            self.step_finished("SUCCEEDED", now_ms, output=committed["output"], output_ref=(committed.get("outputRef") or {}).get("ref"), usage=committed["usage"])
            return
        sets = ["idem.#status = :completed", "idem.#output = :output", "idem.expiresAt = :exp", "idem.completedAt = :nowMs", "#status = :succeeded", "endedAt = :ended"]
        values = {":completed": "COMPLETED", ":output": output, ":exp": expires_at, ":nowMs": now_ms, ":succeeded": "SUCCEEDED", ":ended": iso(self.rt.clock())}
        names = {"#output": "output", "#status": "status", "#usage": "usage"}
        if committed.get("outputRef"):
            sets.append("outputRef = :ref")
            values[":ref"] = committed["outputRef"]["ref"]
        sets.append("#usage = :usage")
        values[":usage"] = committed["usage"]
        # The committed value carries the step's output: kept there once (RunStore reads it from `idem`).
        self._lease_update(self.step_key, lease_id, "SET %s REMOVE #output" % ", ".join(sets), values, names, "idem.#key = :key AND idem.leaseId = :lease")

    def _lease_update(self, key, lease_id, update, values, names, condition):
        names = dict(names)
        values = dict(values, **{":lease": lease_id})
        if "#key" in condition:
            names["#key"] = "key"
            values[":key"] = self.key
        try:
            self.ddb.update_item(TableName=self.table, Key=key, UpdateExpression=update, ConditionExpression=condition,
                                 ExpressionAttributeNames=names, ExpressionAttributeValues=marshall(values))
        except Exception as e:
            if error_code(e) == "ConditionalCheckFailedException":
                raise IdempotencyLeaseLostError("idempotency lease on %s was taken over by another attempt" % self.key) from None
            raise

    def delete(self, lease_id):
        """After a definite failure: this key's idempotency record goes, so a retry runs the function again."""
        try:
            if self.where == "idem":
                self.ddb.delete_item(TableName=self.table, Key=self.idem_key, ConditionExpression="leaseId = :lease",
                                     ExpressionAttributeValues=marshall({":lease": lease_id}))
            else:
                self.ddb.update_item(TableName=self.table, Key=self.step_key, UpdateExpression="REMOVE idem",
                                     ConditionExpression="idem.#key = :key AND idem.leaseId = :lease", ExpressionAttributeNames={"#key": "key"},
                                     ExpressionAttributeValues=marshall({":key": self.key, ":lease": lease_id}))
        except Exception as e:
            if error_code(e) != "ConditionalCheckFailedException":
                raise

    def step_started(self, now_ms):
        self.ddb.update_item(
            TableName=self.table, Key=self.step_key,
            UpdateExpression="SET #status = :s, startedAt = if_not_exists(startedAt, :now), runId = :run, stepId = :step, #type = :type ADD attempts :one",
            ExpressionAttributeNames={"#status": "status", "#type": "type"},
            ExpressionAttributeValues=marshall({":s": "RUNNING", ":now": iso(now_ms), ":run": self.run_id, ":step": self.step_id, ":one": 1, ":type": "step"}))

    def step_finished(self, status, now_ms, output=None, output_ref=None, usage=None, error=None, count_attempt=False, has_output=True):
        sets = ["#status = :s", "endedAt = :now", "runId = :run", "stepId = :step", "#type = :type", "startedAt = if_not_exists(startedAt, :now)"]
        names = {"#status": "status", "#type": "type"}
        values = {":s": status, ":now": iso(now_ms), ":run": self.run_id, ":step": self.step_id, ":type": "step"}
        if error is None and has_output:
            sets.append("#output = :output")
            names["#output"] = "output"
            values[":output"] = self.rt.redactor.redact(output)
        if output_ref is not None:
            sets.append("outputRef = :ref")
            values[":ref"] = output_ref
        if usage is not None:
            sets.append("#usage = :usage")
            names["#usage"] = "usage"
            values[":usage"] = usage
        if error is not None:
            sets.append("#error = :error")
            names["#error"] = "error"
            values[":error"] = self.rt.redactor.redact(error)
        if count_attempt:
            values[":one"] = 1
        self.ddb.update_item(TableName=self.table, Key=self.step_key,
                             UpdateExpression="SET %s%s" % (", ".join(sets), " ADD attempts :one" if count_attempt else ""),
                             ExpressionAttributeNames=names, ExpressionAttributeValues=marshall(values))


def execute_step(rt, env, idempotent, body):
    """executeStep, claiming first: the step runs at most once per key; a committed output is returned as `reused`."""
    instance = step_instance_id(env)
    key = step_idempotency_key(env)
    steps = Steps(rt, env["run"]["id"], instance, key)
    lease_id = str(uuid.uuid4())
    claimed = False
    try:
        ahead = steps.claim(lease_id, rt.clock(), idempotent)
        if ahead is not None:
            value = ahead.get("output") or {}
            steps.step_finished("SUCCEEDED", rt.clock(), output=value.get("output"), output_ref=(value.get("outputRef") or {}).get("ref"),
                                usage=value.get("usage"), count_attempt=True)
            return "reused", value
        claimed = True
        try:
            output = rt.redactor.redact(body())
            if env.get("readByStateMachine"):
                stored, ref = kept_inline(env, output), None
            else:
                # A for_each iteration's envelope lowers the limit (the Map's result holds every iteration's value).
                own = env.get("inlineOutputMaxBytes")
                stored, ref = Blobs(rt).maybe_store(output, own if own is not None and own < rt.config.inline_max else rt.config.inline_max)
        except BaseException:
            steps.delete(lease_id)
            raise
        value = {"output": stored, "usage": {"inputTokens": 0, "outputTokens": 0}, "extra": {}}
        if ref is not None:
            value["outputRef"] = ref
        steps.commit(lease_id, value, rt.clock())
        return "succeeded", value
    except Exception as e:
        try:
            steps.step_finished("FAILED", rt.clock(), error={"name": type(e).__name__, "message": str(e)}, count_attempt=not claimed, has_output=False)
        except Exception:
            pass
        raise


def kept_inline(env, output):
    size = utf8_len(js_json(output))
    if size <= STATE_READ_OUTPUT_MAX_BYTES:
        return output
    raise OutputTooLarge(
        "step '%s' returned %d KiB, but the state machine reads its output itself (a guard, condition, for_each items, a pure step or "
        "hand-off routing), where a reference cannot be followed: it must stay under %d KiB; return less (ids or a summary rather than "
        "whole documents) and let a later step fetch the rest" % (env["step"]["id"], -(-size // 1024), STATE_READ_OUTPUT_MAX_BYTES // 1024),
        {"bytes": size, "maxBytes": STATE_READ_OUTPUT_MAX_BYTES})


_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_./-]*$")


def resolve_module(rt, name):
    """The Python module of function `name` (packages/runtime/src/userfn/resolveUserFunction.ts, for the .py files this Lambda holds)."""
    file, _, export = name.partition("#")
    if not _FUNCTION_NAME.match(file) or ".." in file or (export and not re.match(r"^[A-Za-z_$][\w$]*$", export)):
        raise PolicyDenied('invalid function name "%s"' % name)
    if re.search(r"\.m?[jt]s$", file):
        raise FunctionError('function "%s" is a JavaScript module: the function Lambda runs it, not the Python one' % name)
    relpath = file if file.endswith(".py") else file + ".py"
    if not os.path.isfile(os.path.join(rt.config.functions_dir, relpath)):
        raise FunctionError('no user function "%s" in %s (looked for %s)' % (name, rt.config.functions_dir, relpath))
    return relpath, export or None


def run_function_step(rt, event):
    env = validate_envelope(rt, event)
    blobs = Blobs(rt)
    env["inputs"] = blobs.resolve_refs(env["inputs"])
    config = env["config"]
    name = config.get("function") or config.get("name") or config.get("handler")
    if not isinstance(name, str):
        raise InvalidEnvelope("function step has no config.function")
    relpath, export = resolve_module(rt, name)

    def body():
        secrets = {sid: rt.secret(sid) for sid in env["secrets"]}
        names = config.get("secretNames")
        if isinstance(names, dict):
            bindings = {}
            for binding, sid in names.items():
                if not isinstance(sid, str):
                    raise InvalidEnvelope("config.secretNames.%s must be a secret id" % binding)
                bindings[binding] = secrets[sid] if sid in secrets else rt.secret(sid)
            secrets.update(bindings)
        else:
            bindings = dict(secrets)
        inputs = env["inputs"]
        value = inputs.get("value")
        if value is None:
            value = config.get("args")
        if value is None:
            value = inputs.get("input")
        request = {
            "module": relpath, "callable": export, "input": rt.resolve_deep(value), "kwargs": bindings,
            "context": {"secrets": secrets, "runId": env["run"]["id"], "stepId": env["step"]["id"], "workflow": env["run"]["workflow"]},
        }
        try:
            output, out, err = rt.loop.run_until_complete(rt.runner.call(request, rt.loop))
            log_output(rt, name, env, out, err)
        except stepforge_userfn.UserFunctionError as e:
            log_output(rt, name, env, getattr(e, "stdout", ""), getattr(e, "stderr", ""))
            raise function_error(name, relpath, e) from None
        return json.loads(output)

    status, value = execute_step(rt, env, config.get("idempotent") is True, body)
    result = {"status": status, "output": value.get("output"), "usage": value.get("usage") or {"inputTokens": 0, "outputTokens": 0}}
    if value.get("outputRef"):
        result["outputRef"] = value["outputRef"]
    return result


def log_output(rt, name, env, out, err):
    for stream, text in (("stdout", out), ("stderr", err)):
        if text:
            rt.log("INFO", "function output", {"function": name, "stepId": env["step"]["id"], "runId": env["run"]["id"], "stream": stream, "text": text})


def function_error(name, relpath, e):
    """The Node runtime's wording (functionStep.ts): `function NAME threw ValueError: bad input`."""
    if e.kind == "raised":
        message = "function %s threw %s" % (name, e.message)
    elif e.kind == "not_json":
        message = "function %s %s" % (name, e.message)
    else:
        message = "function %s: %s" % (name, e.message)
    details = {"function": name, "module": relpath, "language": "python", "reason": e.kind}
    if e.exc_type:
        details["exception"] = e.exc_type
    return FunctionError(message, details)


def _renamed(cls, message, details):
    """An exception of the same class (what Step Functions matches) with another message."""
    if issubclass(cls, StepError):
        return cls(message, details)
    e = cls.__new__(cls)
    Exception.__init__(e, message)
    return e


_runtime = None


def handler(event, context):
    """The Lambda entry point."""
    global _runtime
    if _runtime is None:
        _runtime = Runtime()
        stepforge_userfn.install_capture(_RedactingStream(sys.__stdout__, _runtime.redactor))
    rt = _runtime
    started = rt.clock()
    fields = {"handler": "function"}
    if isinstance(event, dict):
        run, step = event.get("run"), event.get("step")
        if isinstance(run, dict):
            fields.update(runId=str(run.get("id")), workflow=str(run.get("workflow")))
        if isinstance(step, dict):
            fields.update(stepId=str(step.get("id")), stepKind=str(step.get("kind")), iteration=step.get("iteration"))
    request_id = getattr(context, "aws_request_id", None)
    if request_id:
        fields["requestId"] = request_id
    rt.log("INFO", "step started", fields)
    try:
        result = rt.redactor.redact(run_function_step(rt, event))
    except Exception as e:
        message = rt.redactor.text(str(e))
        rt.log("ERROR", "step failed", dict(fields, errorName=type(e).__name__, errorMessage=message, durationMs=rt.clock() - started,
                                           **({"details": rt.redactor.redact(e.details)} if isinstance(e, StepError) and e.details else {})))
        if message != str(e):
            raise _renamed(type(e), message, rt.redactor.redact(getattr(e, "details", None))) from None
        raise
    rt.log("INFO", "step finished", dict(fields, durationMs=rt.clock() - started))
    return result
