"""Where a pool may send a credential: the provider table and the policy that holds it.

A pool file is data that someone else may have written, yet it decides two things about
every LiteLLM worker: which environment variable's value is sent as the bearer token
(``api_key_env``) and where it is sent (``api_base``, each deployment's ``api_base``,
or the provider's own address picked from the model prefix). Without a policy
``api_key_env = "AWS_SECRET_ACCESS_KEY"`` and an ``api_base`` of the author's choice
would post that secret to the author's server. So a pool built from a file
(:func:`conductor_gym.pool.make_pool`, ``conductor-gym pools check``, ``serve``) sends a
key only when every route passes :func:`check_credentials`:

* the variable is one of :data:`PROVIDERS`' (``OPENAI_API_KEY``, ...: the table below),
* and it goes to one of its provider's hosts over ``https``, or to a loopback address
  (``localhost``, ``127.0.0.0/8``, ``::1``; ``http`` allowed there);
* without an ``api_base`` the model prefix picks LiteLLM's default address, so the
  variable must belong to that prefix's provider (``OPENAI_API_KEY`` with an
  ``anthropic/...`` model is refused);
* an ``api_base`` must be a plain ``http(s)://host[:port][/path]`` URL (no user info,
  query or backslash: what this module reads as the host is what the client connects to);
* ``params`` only from :data:`SAFE_PARAMS`: the sampling, reasoning and request-body
  parameters, which shape the answer and nothing else. ``params`` go to LiteLLM with the
  call, and many of the arguments LiteLLM takes route it: ``fallbacks`` (models, each
  with its own ``api_base``, tried when the call fails: the provider's key from the
  environment goes with them), ``model_list``, ``context_window_fallback_dict``,
  ``litellm_params``, ``custom_llm_provider``, callbacks, ``mock_response``, and more in
  each release. An allow-list, not a deny-list: a parameter LiteLLM adds later is
  refused until it is listed here. Inside an allowed parameter (``extra_body``,
  ``thinking``, ...) no key may name an address or a credential (``*endpoint*``,
  ``*url*``, ``*host*``, ``*proxy*``, ``*_base``, ``base*``, ``*key*``, ``*header*``,
  ...) or a route (``*fallback*``, ``model_list``, ``*litellm*``, ...), and no string
  may be LiteLLM's environment reference (``"os.environ/NAME"``).

A worker that names no variable sends no key of the file's choosing: to an ``api_base``
it sends a placeholder, and a provider model without one lets LiteLLM read that
provider's own variable for that provider's own address. Both are listed as routes, and
pass. Anything else raises :class:`CredentialPolicyError` naming the field, unless the
caller trusts the file (``trust=True``; ``make_pool(..., trust_credentials=True)``; the
CLI's ``--trust-pool-credentials``). Specs built in code are the user's own and are not
checked unless passed here. Other backends send no credential; their one refused route
is ``trust_remote_code`` set anywhere in ``backend_options`` (vLLM's ``engine_kwargs``,
transformers' ``model_kwargs``): it runs the model repository's code on this machine.

Providers (variable -> hosts; the model prefixes whose default address they are):

============  ==========================================  =================================
provider      variables                                   hosts
============  ==========================================  =================================
openai        OPENAI_API_KEY                              api.openai.com
anthropic     ANTHROPIC_API_KEY                           api.anthropic.com
gemini        GEMINI_API_KEY, GOOGLE_API_KEY              generativelanguage.googleapis.com
mistral       MISTRAL_API_KEY                             api.mistral.ai
groq          GROQ_API_KEY                                api.groq.com
deepseek      DEEPSEEK_API_KEY                            api.deepseek.com
together_ai   TOGETHERAI_API_KEY, TOGETHER_API_KEY        api.together.xyz
openrouter    OPENROUTER_API_KEY                          openrouter.ai
fireworks_ai  FIREWORKS_API_KEY, FIREWORKS_AI_API_KEY     api.fireworks.ai
xai           XAI_API_KEY                                 api.x.ai
cohere        COHERE_API_KEY                              api.cohere.com, api.cohere.ai
azure         AZURE_API_KEY                               any ``*.openai.azure.com``
hosted_vllm   HOSTED_VLLM_API_KEY, VLLM_API_KEY           loopback only
============  ==========================================  =================================
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conductor_gym.errors import ConfigurationError

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "PROVIDERS",
    "SAFE_PARAMS",
    "CredentialPolicyError",
    "CredentialRoute",
    "Provider",
    "check_credentials",
    "credential_routes",
    "format_routes",
    "is_loopback_host",
]

TRUST_HINT = (
    "pass trust_credentials=True to make_pool (CLI: --trust-pool-credentials) only if you "
    "trust this pool file"
)


@dataclass(frozen=True)
class Provider:
    """One row of :data:`PROVIDERS`.

    Attributes:
        name: LiteLLM's provider prefix (``"openai"`` in ``"openai/gpt-5"``).
        variables: The API-key variables that belong to it.
        hosts: The hosts its keys may go to over https (a leading ``"."``: any subdomain
            of that suffix); empty: loopback only.
        prefixes: The model prefixes whose default address is this provider's.
    """

    name: str
    variables: tuple[str, ...]
    hosts: tuple[str, ...]
    prefixes: tuple[str, ...]


PROVIDERS: tuple[Provider, ...] = (
    Provider("openai", ("OPENAI_API_KEY",), ("api.openai.com",), ("openai",)),
    Provider("anthropic", ("ANTHROPIC_API_KEY",), ("api.anthropic.com",), ("anthropic",)),
    Provider(
        "gemini",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        ("generativelanguage.googleapis.com",),
        ("gemini",),
    ),
    Provider("mistral", ("MISTRAL_API_KEY",), ("api.mistral.ai",), ("mistral",)),
    Provider("groq", ("GROQ_API_KEY",), ("api.groq.com",), ("groq",)),
    Provider("deepseek", ("DEEPSEEK_API_KEY",), ("api.deepseek.com",), ("deepseek",)),
    Provider(
        "together_ai",
        ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
        ("api.together.xyz",),
        ("together_ai",),
    ),
    Provider("openrouter", ("OPENROUTER_API_KEY",), ("openrouter.ai",), ("openrouter",)),
    Provider(
        "fireworks_ai",
        ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"),
        ("api.fireworks.ai",),
        ("fireworks_ai",),
    ),
    Provider("xai", ("XAI_API_KEY",), ("api.x.ai",), ("xai",)),
    Provider(
        "cohere",
        ("COHERE_API_KEY",),
        ("api.cohere.com", "api.cohere.ai"),
        ("cohere", "cohere_chat"),
    ),
    Provider("azure", ("AZURE_API_KEY",), (".openai.azure.com",), ("azure",)),
    Provider("hosted_vllm", ("HOSTED_VLLM_API_KEY", "VLLM_API_KEY"), (), ("hosted_vllm",)),
)
"""The allow-list: which variables a pool may name, and where each may go (module
docstring)."""

_BY_VARIABLE = {variable: p for p in PROVIDERS for variable in p.variables}
_BY_PREFIX = {prefix: p for p in PROVIDERS for prefix in p.prefixes}
_URL = re.compile(
    r"^(?P<scheme>https?)://"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?)"
    r"(?::(?P<port>\d{1,5}))?(?P<path>/[^\s\\@?#]*)?$"
)
_REDIRECTING_PARAM = re.compile(r"(endpoint|url|host|proxy|_base$|^base)", re.I)
_CREDENTIAL_PARAM = re.compile(
    r"(api_?key|key$|secret|passw(or)?d|(^|_)token$|authori[sz]ation|header|cookie|credential)",
    re.I,
)
_ROUTING_PARAM = re.compile(r"(fallback|model_list|litellm|provider|callback|mock_)", re.I)
_ENV_REFERENCE = "os.environ/"

_NESTED_REFUSED = (_REDIRECTING_PARAM, _CREDENTIAL_PARAM, _ROUTING_PARAM)

SAFE_PARAMS: frozenset[str] = frozenset(
    {
        # sampling
        "top_p", "top_k", "min_p", "stop", "presence_penalty", "frequency_penalty",
        "repetition_penalty", "logit_bias", "logprobs", "top_logprobs",
        "max_completion_tokens",
        # reasoning
        "reasoning_effort", "thinking", "verbosity",
        # the answer's format and the request's body (sent to the worker's own address)
        "response_format", "extra_body", "user",
    }
)  # fmt: skip
"""The LiteLLM call parameters a pool file's ``params`` may set without being trusted
(module docstring); any other is refused unless the file is trusted."""


class CredentialPolicyError(ConfigurationError):
    """A pool would send a credential where :mod:`conductor_gym.workers.credentials`
    does not allow: one line per refused route (``problems``); ``field`` is the first
    one's (e.g. ``"workers[0] (name='x').backend_options.api_key_env"``)."""

    def __init__(
        self,
        problems: Sequence[str],
        *,
        field: str | None,
        routes: Sequence[CredentialRoute] = (),
    ) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        self.routes: tuple[CredentialRoute, ...] = tuple(routes)
        """Every route of the pool, allowed or not (what goes where)."""
        super().__init__("\n".join(self.problems))
        self.field = field


@dataclass(frozen=True)
class CredentialRoute:
    """One credential a worker would send, and where.

    Attributes:
        worker: The worker's name.
        field: Where the pool sets it (``backend_options.api_key_env``,
            ``backend_options.deployments[1].api_key_env``, ``params.x``, ``model``).
        variable: The environment variable whose value is sent, or ``None`` for none
            chosen by the pool (a placeholder, or the provider's own variables).
        destination: Where it goes: ``host[:port]``, or the provider's default address.
        problem: Why the policy refuses it, or ``None`` when it passes.
    """

    worker: str
    field: str
    variable: str | None
    destination: str
    problem: str | None = None

    @property
    def allowed(self) -> bool:
        return self.problem is None

    def describe(self) -> str:
        """``worker: $VARIABLE -> destination`` and, when refused, why."""
        sent = f"${self.variable}" if self.variable else "no key from the pool file"
        line = f"{self.worker}: {sent} -> {self.destination}"
        return line if self.problem is None else f"{line}  REFUSED: {self.problem}"


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an IP literal, brackets allowed) is this machine's
    loopback: ``localhost`` or an address in ``127.0.0.0/8`` or ``::1``. Any other name,
    even one that resolves to loopback today, is not."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_matches(host: str, allowed: Iterable[str]) -> bool:
    return any(host.endswith(a) if a.startswith(".") else host == a for a in allowed)


def _where(provider: Provider) -> str:
    return ", ".join(provider.hosts) + " or loopback" if provider.hosts else "loopback"


def _judge(variable: str, api_base: str | None, model: str) -> tuple[str, str | None]:
    """(destination, problem) of sending ``$variable`` for ``model`` to ``api_base``."""
    provider = _BY_VARIABLE.get(variable)
    if api_base is None:
        prefix = model.split("/", 1)[0] if "/" in model else None
        target = _BY_PREFIX.get(prefix) if prefix else None
        destination = (
            _default_address(target) if target else f"LiteLLM's default address for {model!r}"
        )
        if provider is None:
            return destination, f"{variable} is not a provider API-key variable"
        if target is None:
            return destination, (
                f"model {model!r} has no known provider prefix, so where {variable} "
                "would go cannot be checked"
            )
        if target is not provider:
            return destination, f"{variable} belongs to {provider.name}, not {target.name}"
        return destination, None
    match = _URL.match(api_base)
    if match is None:
        return repr(api_base), (
            "api_base is not a plain http(s)://host[:port][/path] URL, so its host "
            "cannot be checked"
        )
    host = match["host"].strip("[]").rstrip(".").lower()
    destination = f"{host}:{match['port']}" if match["port"] else host
    if provider is None:
        return destination, f"{variable} is not a provider API-key variable"
    if is_loopback_host(host):
        return destination, None
    if not _host_matches(host, provider.hosts):
        return destination, f"{variable} may go only to {_where(provider)}"
    if match["scheme"] != "https":
        return destination, f"{variable} may go to {host} over https only"
    return destination, None


def _default_address(provider: Provider) -> str:
    host = provider.hosts[0] if provider.hosts else ""
    if not host or host.startswith("."):
        return f"{provider.name}'s address from your environment"
    return host


def _plain_destination(api_base: str | None, model: str) -> str:
    if api_base is None:
        prefix = model.split("/", 1)[0] if "/" in model else model
        return f"{prefix}'s default address (its own variables, read by LiteLLM)"
    match = _URL.match(api_base)
    return (match["host"] + (f":{match['port']}" if match["port"] else "")) if match else api_base


def credential_routes(spec: WorkerSpec) -> tuple[CredentialRoute, ...]:
    """Every credential ``spec``'s worker would send, and where, judged by the policy
    (module docstring); ``()`` for backends that send none.

    Raises:
        ValueError: the LiteLLM backend options are malformed (naming the option).
    """
    if spec.backend != "litellm":
        return _remote_code_routes(spec)
    from conductor_gym.workers.litellm import make_litellm_worker

    worker = make_litellm_worker(spec)
    routes: list[CredentialRoute] = []
    for key in sorted(spec.params):
        if (problem := _param_problem(key, spec.params[key])) is not None:
            shown = repr(spec.params[key])
            shown = shown if len(shown) <= 200 else shown[:197] + "..."
            routes.append(CredentialRoute(spec.name, f"params.{key}", None, shown, problem))
    top = "backend_options.api_key_env"
    targets: list[tuple[str, str | None, str | None, str]] = []
    if worker.deployments:
        own = spec.backend_options.get("deployments") or ()
        for i, deployment in enumerate(worker.deployments):
            named = isinstance(own[i], Mapping) and own[i].get("api_key_env")
            field = f"backend_options.deployments[{i}].api_key_env" if named else top
            targets.append((field, deployment.api_key_env, deployment.api_base, deployment.model))
    else:
        targets.append((top, worker.api_key_env, worker.api_base, worker.model))
    for field, variable, api_base, model in targets:
        if variable is None:
            routes.append(
                CredentialRoute(spec.name, field, None, _plain_destination(api_base, model))
            )
            continue
        destination, problem = _judge(variable, api_base, model)
        routes.append(CredentialRoute(spec.name, field, variable, destination, problem))
    return tuple(routes)


def _remote_code_routes(spec: WorkerSpec) -> tuple[CredentialRoute, ...]:
    """A local backend's options that would run code from the model's repository
    (``trust_remote_code`` set anywhere in ``backend_options``, e.g. vLLM's
    ``engine_kwargs``): refused from an untrusted pool file like a credential route."""
    stack: list[tuple[str, object]] = [("backend_options", spec.backend_options)]
    routes: list[CredentialRoute] = []
    while stack:
        where, item = stack.pop()
        if isinstance(item, Mapping):
            for name, inner in item.items():
                if str(name) == "trust_remote_code" and inner:
                    problem = (
                        "runs code from the model's repository on this machine, which a pool "
                        "file may not ask for"
                    )
                    routes.append(
                        CredentialRoute(spec.name, f"{where}.{name}", None, repr(inner), problem)
                    )
                stack.append((f"{where}.{name}", inner))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))
    return tuple(routes)


def _param_problem(key: str, value: object) -> str | None:
    """Why a pool file may not set ``params[key] = value`` untrusted, or ``None``."""
    if key not in SAFE_PARAMS:
        what = (
            "can redirect the call and its credentials"
            if _REDIRECTING_PARAM.search(key)
            else "not a sampling, reasoning or request-body parameter: LiteLLM may route "
            "the call (and send its credentials) by it"
        )
        return f"{what}; a pool file may set only {', '.join(sorted(SAFE_PARAMS))}"
    stack: list[tuple[str, object]] = [(f"params.{key}", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, Mapping):
            for name, inner in item.items():
                inner_where = f"{where}.{name}"
                if any(p.search(str(name)) for p in _NESTED_REFUSED):
                    return f"{inner_where} can name an address, a credential or a route"
                stack.append((inner_where, inner))
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))
        elif isinstance(item, str) and item.strip().startswith(_ENV_REFERENCE):
            return (
                f"{where} is LiteLLM's reference to an environment variable "
                f"({item.strip()!r}), which LiteLLM may read and send"
            )
    return None


def check_credentials(
    specs: Sequence[WorkerSpec], *, trust: bool = False, source: str | None = None
) -> tuple[CredentialRoute, ...]:
    """The routes of every spec (:func:`credential_routes`); with any refused and
    ``trust`` false, raise :class:`CredentialPolicyError` (one line per refused route,
    each naming ``source``, the worker and the field, ending with how to trust it).

    A spec whose backend options are malformed has no routes here: its worker cannot be
    built, so it sends nothing, and building it reports the option.

    Raises:
        CredentialPolicyError: a refused route, without ``trust``.
    """
    found: list[CredentialRoute] = []
    for spec in specs:
        try:
            found.extend(credential_routes(spec))
        except ValueError:
            continue
    routes = tuple(found)
    refused = [route for route in routes if route.problem is not None]
    if refused and not trust:
        where = f"{source}: " if source else ""
        index = {spec.name: i for i, spec in enumerate(specs)}
        fields = [f"workers[{index[r.worker]}] (name={r.worker!r}).{r.field}" for r in refused]
        problems = [
            f"{where}{field}: refused to send ${r.variable or '?'} to {r.destination}: "
            f"{r.problem}; {TRUST_HINT}"
            if r.variable
            else f"{where}{field}: {r.problem}; {TRUST_HINT}"
            for field, r in zip(fields, refused, strict=True)
        ]
        raise CredentialPolicyError(problems, field=fields[0], routes=routes)
    return routes


def format_routes(routes: Sequence[CredentialRoute]) -> str:
    """``credentials (variable -> destination):`` and one line per route."""
    if not routes:
        return "credentials: none sent (no worker sends a key)"
    return "\n".join(
        ["credentials (variable -> destination):"] + [f"  {r.describe()}" for r in routes]
    )
