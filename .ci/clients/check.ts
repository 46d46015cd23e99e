// Type-checked in CI (tsc --noEmit, strict) against the types openapi-typescript generates
// from wm's OpenAPI document: what an integrator writes with openapi-fetch must compile,
// and what the document says must reach the types (enums shared between answers and
// requests, booleans, typed errors, the timeline's union, Idempotency-Key).
import createClient from "openapi-fetch";
import type { components, paths } from "./wm-api";

type Schemas = components["schemas"];

const wm = createClient<paths>({
  baseUrl: "http://127.0.0.1:3000/api/v1",
  headers: { Authorization: "Bearer wm_live_example" },
});

export async function tour(): Promise<void> {
  // A list with its filters; a source read from one contact is a filter of the list.
  const list = await wm.GET("/contacts", { params: { query: { tab: "leads", pageSize: 20 } } });
  if (list.error) throw new Error(list.error.message.toString());
  const first: Schemas["Contact"] | undefined = list.data.data[0];
  const source: Schemas["ContactSource"] | undefined = first?.source;
  await wm.GET("/contacts", { params: { query: { source } } });

  // A create with a key that makes its retry safe; the 409 says who holds the phone.
  const created = await wm.POST("/contacts", {
    params: { header: { "Idempotency-Key": "create-ana-1" } },
    body: { fullName: "Ana", primaryPhone: "+5215512345678" },
  });
  if (created.response.status === 409) {
    const conflict = created.error as Schemas["PhoneExistsErrorBody"];
    const holder: string = conflict.contactId;
    const code: Schemas["ErrorCode"] = conflict.code;
    console.log(holder, code);
  }

  // Timeline entries: one union on `type`, each with its id and time.
  if (created.data) {
    const timeline = await wm.GET("/contacts/{id}/timeline", {
      params: { path: { id: created.data.id } },
    });
    for (const entry of timeline.data?.data ?? []) {
      const at: string = entry.at;
      const id: string = entry.id;
      if (entry.type === "note") {
        const body: string = entry.body;
        console.log(at, id, body);
      }
    }
  }

  // Booleans are booleans; enums are the components.
  await wm.GET("/automations", { params: { query: { includeArchived: true } } });
  const campaign = await wm.GET("/campaigns/{id}", { params: { path: { id: "0193a5b2-7c1e-7f00-8000-000000000001" } } });
  const reason: Schemas["StopReason"] | null | undefined = campaign.data?.stopReason;
  const variables: Record<string, string> | undefined = campaign.data?.variables;
  console.log(reason, variables);

  // A send, retried safely.
  await wm.POST("/campaigns/{id}/send", {
    params: { path: { id: "0193a5b2-7c1e-7f00-8000-000000000001" }, header: { "Idempotency-Key": "send-1" } },
    body: {},
  });
}
