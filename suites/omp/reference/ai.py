"""The OMP 0.2 extract/compress endpoints of the reference server: a transcript goes to the
configured Provider (none by default: 422 no_api_key, errata O11) and what comes back is
validated and stored like any memory. Each rule is a method a mutant overrides."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.suites.omp.reference.access import OmpAccess
from memconform.suites.omp.reference.parts import (
    MAX_TRANSCRIPT,
    ApiError,
    Out,
    Principal,
    Provider,
    ProviderError,
    Req,
)


class OmpAiEndpoints(OmpAccess):
    """POST /v1/extract and /v1/compress (`op_extract`, `op_compress`)."""

    def provider_for(self, body: dict[str, Any]) -> Provider:
        """The configured provider; never a real AI call the operator did not configure (errata O11)."""
        if self.provider is not None:
            return self.provider
        if body.get("api_key"):
            raise ApiError("ai_error", "this reference server calls no external AI provider; configure a Provider", status=502)
        raise ApiError("no_api_key", "no AI API key is configured for extract/compress; nothing was stored")

    def ai_request(self, who: Principal, body: dict[str, Any]) -> tuple[str, str]:
        transcript = self.check_string(body.get("transcript"), "transcript", MAX_TRANSCRIPT)
        for name in ("provider", "api_key"):
            if body.get(name) is not None and not isinstance(body[name], str):
                raise self.invalid("type", name, f"{name} must be a string")
        default_tool = who.tool or "omp-extract"
        tool = self.check_string(body["source_tool"], "source_tool") if body.get("source_tool") is not None else default_tool
        self.check_write_tool(who, tool)
        return transcript, tool

    def generated_doc(self, who: Principal, item: dict[str, Any], tool: str) -> dict[str, Any]:
        now = self.timestamp(self.store.next_micros())
        try:
            fields = self.validate_memory({**item, "source": {"tool": tool, "timestamp": now}}, partial=False)
        except ApiError as err:
            raise ApiError("ai_error", f"the AI provider returned an unusable memory: {err.message}", status=502) from None
        return self.new_doc(self.fresh_id(who.user), fields)

    def call_provider(self, fn: Callable[[str], Any], transcript: str) -> Any:
        try:
            return fn(transcript)
        except ProviderError as exc:
            raise ApiError("ai_error", f"the AI provider returned an error: {exc}", status=502) from None

    def extracted(self, who: Principal, docs: list[dict[str, Any]]) -> Out:
        return 201, {"extracted": len(docs), "memories": docs}, {}

    def compressed(self, who: Principal, doc: dict[str, Any]) -> Out:
        return 201, {"memory": doc}, {}

    def op_extract(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        transcript, tool = self.ai_request(who, body)
        provider = self.provider_for(body)
        items = self.call_provider(provider.extract, transcript)
        with self.store.transaction():
            docs = [self.generated_doc(who, item, tool) for item in items]
            for doc in docs:
                self.store.insert(who.user, doc)
        for doc in docs:
            self.audit(who, "extract", doc["id"])
        return self.extracted(who, docs)

    def op_compress(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)
        transcript, tool = self.ai_request(who, body)
        provider = self.provider_for(body)
        summary = self.call_provider(provider.compress, transcript)
        with self.store.transaction():
            doc = self.generated_doc(who, {"content": summary, "type": "episodic", "tags": ["session-summary"]}, tool)
            self.store.insert(who.user, doc)
        self.audit(who, "compress", doc["id"])
        return self.compressed(who, doc)
