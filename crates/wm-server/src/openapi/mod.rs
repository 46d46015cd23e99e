//! The OpenAPI 3.1 document of API v1, generated from the wire types' schemars schemas and
//! the table of operations in `operations` (a test checks every operation against the router, and
//! another checks the committed `docs/openapi.json` for drift).
//!
//! Responses are described as the server writes them (serialisation contract, in
//! `components/schemas`); request bodies and queries as the server reads them
//! (deserialisation contract, inlined).

use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};
use wm_types::common::{BusinessErrorBody, ValidationErrorBody};
use wm_types::contacts::Identity;
use wm_types::enums::Scope;

mod operations;

use operations::operations;

type Gen = fn(&mut Generators) -> Value;

/// The two generators: responses (referenced components) and requests (inlined).
pub struct Generators {
    responses: SchemaGenerator,
    requests: SchemaGenerator,
}

impl Generators {
    fn new() -> Self {
        let mut out = SchemaSettings::draft2020_12();
        out.definitions_path = "/components/schemas".into();
        out.contract = Contract::Serialize;
        out.meta_schema = None;
        let mut input = SchemaSettings::draft2020_12();
        input.inline_subschemas = true;
        input.meta_schema = None;
        Generators {
            responses: out.into_generator(),
            requests: input.into_generator(),
        }
    }
}

fn response<T: JsonSchema>(g: &mut Generators) -> Value {
    g.responses.subschema_for::<T>().to_value()
}

fn request<T: JsonSchema>(g: &mut Generators) -> Value {
    let mut v = g.requests.root_schema_for::<T>().to_value();
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    v
}

/// One operation of the API.
struct Op {
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    scope: Scope,
    query: Option<Gen>,
    body: Option<Gen>,
    /// The body's media type (JSON unless a file is uploaded).
    body_type: &'static str,
    status: u16,
    response: Gen,
}

const fn op(
    method: &'static str,
    path: &'static str,
    tag: &'static str,
    summary: &'static str,
    scope: Scope,
    status: u16,
    response: Gen,
) -> Op {
    Op {
        method,
        path,
        tag,
        summary,
        scope,
        query: None,
        body: None,
        body_type: "application/json",
        status,
        response,
    }
}

impl Op {
    const fn query(mut self, q: Gen) -> Op {
        self.query = Some(q);
        self
    }
    const fn body(mut self, b: Gen) -> Op {
        self.body = Some(b);
        self
    }
    const fn multipart(mut self, b: Gen) -> Op {
        self.body = Some(b);
        self.body_type = "multipart/form-data";
        self
    }
}

fn parameters(op: &Op, g: &mut Generators) -> Vec<Value> {
    let mut out = Vec::new();
    for seg in op.path.split('/') {
        if let Some(name) = seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            out.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}));
        }
    }
    if let Some(q) = op.query {
        let schema = q(g);
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            for (name, s) in props {
                let mut p = json!({"name": name, "in": "query", "required": required.contains(name), "schema": s});
                if name == "ids" {
                    p["style"] = json!("form");
                    p["explode"] = json!(false);
                }
                out.push(p);
            }
        }
    }
    out
}

fn error(g: &mut Generators, validation: bool) -> Value {
    let business = response::<BusinessErrorBody>(g);
    let schema = if validation {
        json!({"oneOf": [response::<ValidationErrorBody>(g), business]})
    } else {
        business
    };
    json!({"description": "Error", "content": {"application/json": {"schema": schema}}})
}

/// The document.
pub fn document() -> Value {
    let mut g = Generators::new();
    let mut paths: Map<String, Value> = Map::new();
    for op in operations() {
        let mut o = json!({
            "tags": [op.tag],
            "summary": op.summary,
            "operationId": format!("{}{}", op.method, op.path.replace(['/', '{', '}', '-'], "_")),
            "description": format!("Requires the scope `{}`.", op.scope),
            "security": [{"apiKey": []}],
            "parameters": parameters(&op, &mut g),
            "responses": {
                op.status.to_string(): {
                    "description": "Success",
                    "headers": {
                        "RateLimit-Limit": {"schema": {"type": "integer"}},
                        "RateLimit-Remaining": {"schema": {"type": "integer"}},
                        "RateLimit-Reset": {"schema": {"type": "integer"}}
                    },
                    "content": {"application/json": {"schema": (op.response)(&mut g)}}
                },
                "400": error(&mut g, true),
                "401": error(&mut g, false),
                "403": error(&mut g, false),
                "404": error(&mut g, false),
                "429": error(&mut g, false)
            }
        });
        if matches!(op.method, "post" | "patch" | "delete") {
            o["responses"]["409"] = error(&mut g, false);
        }
        if op.path == "/contacts/{id}/identities" {
            o["responses"]["200"] = json!({"description": "Already linked to this contact", "content": {"application/json": {"schema": response::<Identity>(&mut g)}}});
        }
        if let Some(b) = op.body {
            o["requestBody"] =
                json!({"required": false, "content": {op.body_type: {"schema": b(&mut g)}}});
        }
        let entry = paths.entry(op.path.to_owned()).or_insert_with(|| json!({}));
        entry[op.method] = o;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "wm API",
            "version": "1.0.0",
            "description": "Multi-tenant customer messaging and marketing: contacts, campaigns, conversations, automations, reports and webhooks. Every call carries `Authorization: Bearer <API key>`; more than 600 requests in any 60 s answer 429."
        },
        "servers": [{"url": "/api/v1"}],
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer", "description": "wm_live_… API key"}},
            "schemas": g.responses.take_definitions(true)
        },
        "paths": paths
    })
}

/// The (method, path) pairs of the document, for checking them against the router.
pub fn routes() -> Vec<(&'static str, &'static str)> {
    operations()
        .into_iter()
        .map(|o| (o.method, o.path))
        .collect()
}

/// A self-contained page listing the operations, read from `openapi.json`.
pub const DOCS_HTML: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>wm API v1</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
h2{margin-top:2rem;border-bottom:1px solid #ddd}.op{margin:.6rem 0;padding:.5rem .8rem;border:1px solid #e4e4e4;border-radius:6px}
.m{display:inline-block;min-width:4.5rem;font-weight:600;text-transform:uppercase}.get{color:#1a7f37}.post{color:#0550ae}.patch{color:#8250df}.delete{color:#cf222e}
code{background:#f4f4f4;padding:0 .3rem;border-radius:3px}details pre{background:#f7f7f7;padding:.6rem;overflow:auto;font-size:12px}</style></head>
<body><h1>wm API v1</h1><p>The machine-readable document is <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p><div id="ops">Loading…</div>
<script>
fetch('openapi.json').then(r=>r.json()).then(doc=>{
  const byTag={};
  for(const [path,methods] of Object.entries(doc.paths)) for(const [m,op] of Object.entries(methods)) (byTag[op.tags[0]] ||= []).push([m,path,op]);
  const el=document.getElementById('ops'); el.textContent='';
  for(const [tag,ops] of Object.entries(byTag)){
    const h=document.createElement('h2'); h.textContent=tag; el.appendChild(h);
    for(const [m,path,op] of ops){
      const d=document.createElement('div'); d.className='op';
      const ok=Object.keys(op.responses).find(s=>s<'300');
      d.innerHTML=`<span class="m ${m}">${m}</span> <code>${path}</code> — ${op.summary}<br><small>${op.description} Success: ${ok}.</small>`;
      const det=document.createElement('details'); const s=document.createElement('summary'); s.textContent='details';
      const pre=document.createElement('pre'); pre.textContent=JSON.stringify({parameters:op.parameters,requestBody:op.requestBody,response:op.responses[ok]},null,2);
      det.append(s,pre); d.appendChild(det); el.appendChild(d);
    }
  }
});
</script></body></html>"#;
