"""The shape of the official `kubernetes` Python client, for operators run by kubeloop.

`kubernetes.client.CoreV1Api()`, `AppsV1Api()`, `BatchV1Api()`, `CustomObjectsApi()` and
friends with the client's method names (`create_namespaced_deployment`, `read_namespaced_pod`,
`list_pod_for_all_namespaces`, `patch_namespaced_config_map`, `delete_namespaced_service` ...),
answers with attribute access (`dep.spec.replicas`), `ApiException` with `status`, `reason` and
`body`; `kubernetes.config.load_*` do nothing, as there is nothing to connect to. Every request
goes to the simulated kube-apiserver through the host (`_transport`, set by kopf's host).
"""
import json
import re
import sys
import types

_transport = None

# The reason phrases of the HTTP status codes kube-apiserver answers with, as urllib3 reports them.
_PHRASES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            409: "Conflict", 410: "Gone", 415: "Unsupported Media Type", 422: "Unprocessable Entity",
            429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable", 504: "Gateway Timeout"}


class ApiException(Exception):
    def __init__(self, status=None, reason=None, http_resp=None, *, body=None, headers=None):
        self.status = status
        self.reason = reason
        self.body = body
        self.headers = headers or {}

    def __str__(self):
        text = "({0})\nReason: {1}\n".format(self.status, self.reason)
        if self.headers:
            text += "HTTP response headers: {0}\n".format(self.headers)
        if self.body:
            text += "HTTP response body: {0}\n".format(self.body)
        return text


class ApiValueError(ValueError):
    pass


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# Fields that are maps from strings in the API: the client hands them out as plain dicts.
_MAPS = {"labels", "annotations", "data", "binaryData", "stringData", "matchLabels", "nodeSelector", "selector",
         "limits", "requests", "capacity", "allocatable", "parameters"}


class Model:
    """An object of the API with the client's attribute names (`metadata.owner_references`)."""

    def __init__(self, _data=None, **kwargs):
        object.__setattr__(self, "_data", dict(_data or {}))
        for key, value in kwargs.items():
            if value is not None:
                self._data[_camel(key)] = value

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        key = _camel(name)
        data = object.__getattribute__(self, "_data")
        return _wrap(key, data.get(key, data.get(name)))

    def __setattr__(self, name, value):
        self._data[_camel(name)] = value

    def __getitem__(self, key):
        return _wrap(key, self._data[key])

    def __contains__(self, key):
        return key in self._data

    def get(self, key, default=None):
        return _wrap(key, self._data.get(key, default))

    def to_dict(self):
        return _plain(self)

    def __eq__(self, other):
        return isinstance(other, Model) and _plain(self) == _plain(other)

    def __repr__(self):
        return repr(_plain(self))


class ModelList(Model):
    """A list answer: `.items` is the list of objects (a dict's `items` would shadow it)."""

    @property
    def items(self):
        return [_wrap("", item) for item in self._data.get("items", [])]


def _wrap(key, value):
    if isinstance(value, dict) and key not in _MAPS:
        return Model(value)
    if isinstance(value, list):
        return [_wrap("", v) for v in value]
    return value


def _plain(value):
    """A body as JSON: models and dicts (camelCase keys for models built from snake_case)."""
    # As the client's sanitize_for_serialization: a model's unset (None) attributes are left
    # out, but a dict's None is sent as null -- in a merge patch, the way to remove a key.
    if isinstance(value, Model):
        return {str(k): _plain(v) for k, v in object.__getattribute__(value, "_data").items() if v is not None}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return _plain(value.to_dict())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _send(request):
    if _transport is None:
        raise ApiException(status=0, reason="kubeloop: API calls are only answered inside a handler")
    answer = _transport(request)
    if answer.get("ok"):
        body = answer.get("body")
        if isinstance(body, dict) and "items" in body:
            return ModelList(body)
        return _wrap("", body)
    status = answer.get("status", 500)
    raise ApiException(status=status, reason=_PHRASES.get(status, "Unknown"), body=json.dumps(answer.get("body"), separators=(",", ":")),
                       headers={"Content-Type": "application/json"})


# Each API class's resources: the client's snake_case name -> (group, version, plural, namespaced).
_RESOURCES = {
    "CoreV1Api": ("", "v1", {
        "pod": ("pods", True), "service": ("services", True), "config_map": ("configmaps", True),
        "secret": ("secrets", True), "namespace": ("namespaces", False), "node": ("nodes", False),
        "event": ("events", True), "endpoints": ("endpoints", True),
        "persistent_volume_claim": ("persistentvolumeclaims", True), "persistent_volume": ("persistentvolumes", False),
        "service_account": ("serviceaccounts", True), "replication_controller": ("replicationcontrollers", True)}),
    "AppsV1Api": ("apps", "v1", {
        "deployment": ("deployments", True), "replica_set": ("replicasets", True),
        "stateful_set": ("statefulsets", True), "daemon_set": ("daemonsets", True),
        "controller_revision": ("controllerrevisions", True)}),
    "BatchV1Api": ("batch", "v1", {"job": ("jobs", True), "cron_job": ("cronjobs", True)}),
    "PolicyV1Api": ("policy", "v1", {"pod_disruption_budget": ("poddisruptionbudgets", True)}),
    "AutoscalingV2Api": ("autoscaling", "v2", {"horizontal_pod_autoscaler": ("horizontalpodautoscalers", True)}),
    "StorageV1Api": ("storage.k8s.io", "v1", {"storage_class": ("storageclasses", False)}),
    "CoordinationV1Api": ("coordination.k8s.io", "v1", {"lease": ("leases", True)}),
    "DiscoveryV1Api": ("discovery.k8s.io", "v1", {"endpoint_slice": ("endpointslices", True)}),
    "ApiextensionsV1Api": ("apiextensions.k8s.io", "v1", {"custom_resource_definition": ("customresourcedefinitions", False)}),
}

_VERBS = {"create": "create", "read": "get", "list": "list", "patch": "patch", "replace": "replace", "delete": "delete"}
_METHOD = re.compile(r"^(create|read|list|patch|replace|delete)_(namespaced_)?([a-z_]+?)(_status)?$")
_ALL_NAMESPACES = re.compile(r"^list_([a-z_]+)_for_all_namespaces$")


def _request(verb, group, version, plural, namespace=None, name=None, body=None, subresource=None, **options):
    request = {"verb": verb, "group": group, "version": version, "plural": plural}
    if namespace is not None:
        request["namespace"] = namespace
    if name is not None:
        request["name"] = name
    if body is not None:
        request["body"] = _plain(body)
    if subresource:
        request["subresource"] = subresource
    for option in ("label_selector", "field_selector", "grace_period_seconds", "propagation_policy"):
        if options.get(option) is not None:
            request[option] = options[option]
    return _send(request)


class _TypedApi:
    _name = None

    def __init__(self, api_client=None):
        self.api_client = api_client

    def __getattr__(self, method):
        if method.startswith("__"):
            raise AttributeError(method)
        group, version, resources = _RESOURCES[self._name]
        every = _ALL_NAMESPACES.match(method)
        if every and every.group(1) in resources and resources[every.group(1)][1]:
            plural = resources[every.group(1)][0]
            return lambda **kw: _request("list", group, version, plural, **kw)
        found = _METHOD.match(method)
        if not found or found.group(3) not in resources:
            raise AttributeError("'%s' object has no attribute '%s'" % (self._name, method))
        verb, namespaced, resource, status = found.group(1), bool(found.group(2)), found.group(3), found.group(4)
        plural, is_namespaced = resources[resource]
        if namespaced != is_namespaced:
            raise AttributeError("'%s' object has no attribute '%s'" % (self._name, method))
        sub = "status" if status else None

        def call(*args, **kw):
            names = ([] if verb in ("create", "list") else ["name"]) + (["namespace"] if namespaced else []) \
                + (["body"] if verb in ("create", "patch", "replace") else [])
            if len(args) > len(names):
                raise TypeError("%s() takes %d positional arguments" % (method, len(names)))
            for key, value in zip(names, args):
                kw[key] = value
            for key in names:
                if key not in kw:
                    raise ApiValueError("Missing the required parameter `%s` when calling `%s`" % (key, method))
            return _request(_VERBS[verb], group, version, plural, subresource=sub, **kw)
        return call


def _api_class(name):
    return type(name, (_TypedApi,), {"_name": name})


class CustomObjectsApi:
    def __init__(self, api_client=None):
        self.api_client = api_client

    def create_namespaced_custom_object(self, group, version, namespace, plural, body, **kw):
        return _request("create", group, version, plural, namespace=namespace, body=body)

    def create_cluster_custom_object(self, group, version, plural, body, **kw):
        return _request("create", group, version, plural, body=body)

    def get_namespaced_custom_object(self, group, version, namespace, plural, name, **kw):
        return _plain(_request("get", group, version, plural, namespace=namespace, name=name))

    def get_cluster_custom_object(self, group, version, plural, name, **kw):
        return _plain(_request("get", group, version, plural, name=name))

    def list_namespaced_custom_object(self, group, version, namespace, plural, **kw):
        return _plain(_request("list", group, version, plural, namespace=namespace, **kw))

    def list_cluster_custom_object(self, group, version, plural, **kw):
        return _plain(_request("list", group, version, plural, **kw))

    def patch_namespaced_custom_object(self, group, version, namespace, plural, name, body, **kw):
        return _plain(_request("patch", group, version, plural, namespace=namespace, name=name, body=body))

    def patch_namespaced_custom_object_status(self, group, version, namespace, plural, name, body, **kw):
        return _plain(_request("patch", group, version, plural, namespace=namespace, name=name, body=body, subresource="status"))

    def patch_cluster_custom_object(self, group, version, plural, name, body, **kw):
        return _plain(_request("patch", group, version, plural, name=name, body=body))

    def replace_namespaced_custom_object(self, group, version, namespace, plural, name, body, **kw):
        return _plain(_request("replace", group, version, plural, namespace=namespace, name=name, body=body))

    def delete_namespaced_custom_object(self, group, version, namespace, plural, name, **kw):
        return _plain(_request("delete", group, version, plural, namespace=namespace, name=name))

    def delete_cluster_custom_object(self, group, version, plural, name, **kw):
        return _plain(_request("delete", group, version, plural, name=name))


class ApiClient:
    def __init__(self, configuration=None, *args, **kwargs):
        self.configuration = configuration

    def sanitize_for_serialization(self, obj):
        return _plain(obj)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Configuration:
    def __init__(self, *args, **kwargs):
        self.host = "http://kubeloop"


def _model_class(name):
    return type(name, (Model,), {})


client = types.ModuleType("kubernetes.client")
client.ApiException = ApiException
client.ApiValueError = ApiValueError
client.ApiClient = ApiClient
client.Configuration = Configuration
client.CustomObjectsApi = CustomObjectsApi
for _name in _RESOURCES:
    setattr(client, _name, _api_class(_name))


def _client_getattr(name):
    # V1Pod, V1ObjectMeta, V1DeleteOptions ...: the client's models, as generic objects.
    if re.match(r"^V\d+(alpha\d+|beta\d+)?[A-Z]", name):
        model = _model_class(name)
        setattr(client, name, model)
        return model
    raise AttributeError("module 'kubernetes.client' has no attribute '%s'" % name)


client.__getattr__ = _client_getattr
rest = types.ModuleType("kubernetes.client.rest")
rest.ApiException = ApiException
exceptions = types.ModuleType("kubernetes.client.exceptions")
exceptions.ApiException = ApiException
exceptions.ApiValueError = ApiValueError
client.rest = rest
client.exceptions = exceptions

config = types.ModuleType("kubernetes.config")


def _no_op(*args, **kwargs):
    """There is nothing to connect to: the operator's requests go to the simulation."""


config.load_kube_config = _no_op
config.load_incluster_config = _no_op
config.load_config = _no_op
config.ConfigException = type("ConfigException", (Exception,), {})
config.config_exception = types.ModuleType("kubernetes.config.config_exception")
config.config_exception.ConfigException = config.ConfigException

sys.modules["kubernetes.client"] = client
sys.modules["kubernetes.client.rest"] = rest
sys.modules["kubernetes.client.exceptions"] = exceptions
sys.modules["kubernetes.config"] = config
sys.modules["kubernetes.config.config_exception"] = config.config_exception
