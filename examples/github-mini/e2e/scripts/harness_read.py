"""Seed step 8 as the harness: the packaged Python SDK in gateway mode.

Prints one JSON object: gateway_mode, connector, issues or issues_error,
created or create_error, and env_reads (every environment variable the SDK
read by name, through a spy put in place of os.environ before the import).
"""
import collections.abc
import json
import os
import sys


class EnvSpy(collections.abc.MutableMapping):
    """os.environ, recording each variable read by name."""

    def __init__(self, env):
        self._env = env
        self.reads = set()

    def __getitem__(self, key):
        self.reads.add(key)
        return self._env[key]

    def __setitem__(self, key, value):
        self._env[key] = value

    def __delitem__(self, key):
        del self._env[key]

    def __iter__(self):
        return iter(self._env)

    def __len__(self):
        return len(self._env)

    def __contains__(self, key):
        self.reads.add(key)
        return key in self._env

    # Bulk views (urllib's proxy lookup walks them) are not reads by name.
    def keys(self):
        return self._env.keys()

    def items(self):
        return self._env.items()

    def values(self):
        return self._env.values()

    def copy(self):
        return dict(self._env)


def describe(e):
    d = {"type": type(e).__name__, "message": str(e)[:500]}
    # The SDK raises one class per error code under AnvilError; a caller that
    # catches the base must still catch it.
    d["bases"] = [c.__name__ for c in type(e).__mro__]
    for attr in ("code", "details"):
        if hasattr(e, attr):
            d[attr] = getattr(e, attr)
    return d


def main():
    spy = EnvSpy(os.environ)
    os.environ = spy
    out = {}
    try:
        from anvil_github import AnvilError, GithubClient  # noqa: F401

        client = GithubClient()
        gw = getattr(client, "_gateway", None)
        out["gateway_mode"] = gw is not None
        out["connector"] = getattr(gw, "connector", None)
    except Exception as e:  # the package may not exist yet
        out["import_error"] = describe(e)
        out["env_reads"] = sorted(spy.reads)
        return out
    try:
        out["issues"] = client.list_issue(owner="octo", repo="hello")
    except Exception as e:
        out["issues_error"] = describe(e)
    try:
        out["created"] = client.create_issue(owner="octo", repo="hello", title="x", confirm=True)
    except Exception as e:
        out["create_error"] = describe(e)
    out["env_reads"] = sorted(spy.reads)
    return out


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(), default=repr) + "\n")
