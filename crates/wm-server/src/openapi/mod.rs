//! The OpenAPI 3.1 document of API v1, generated with aide from the router itself: each route
//! in `crate::routes` declares its path, tag and summary once, and its extractors and
//! return type document the rest (scope and path ids in [`crate::extract`], success
//! statuses in [`crate::reply`], errors in [`crate::error`]). A test checks the committed
//! `docs/openapi.json` for drift.
//!
//! Responses are described as the server writes them (serialisation contract, in
//! `components/schemas`); request bodies and queries as the server reads them
//! (deserialisation contract, inlined).

mod errors;
mod ids;
mod parts;

pub use ids::{OPERATION_IDS, operation_id};
pub use parts::{json_response, media_type, request_body};

use aide::axum::ApiRouter;
use aide::generate;
use aide::openapi::{
    Info, OpenApi, Parameter, ParameterData, ParameterSchemaOrContent, QueryStyle, ReferenceOr,
    SchemaObject, SecurityScheme, Server, StatusCode,
};
use aide::transform::TransformOpenApi;
use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The name of the API-key security scheme the operations require.
pub const SECURITY_SCHEME: &str = "apiKey";

const DESCRIPTION: &str = "Multi-tenant customer messaging and marketing: contacts, \
    campaigns, conversations, automations, reports and webhooks. Every call carries \
    `Authorization: Bearer <API key>`; more than 600 requests in any 60 s answer 429.";

/// The document of the routes `routes` builds (called here, once aide's per-thread context
/// is ready); [`crate::routes::document`] passes the API's router. No database needed.
pub fn document<S: Clone + Send + Sync + 'static>(routes: impl FnOnce() -> ApiRouter<S>) -> Value {
    // aide documents each route as it is added, in a per-thread context: start it clean,
    // with our response generator, and keep `null` in query schemas as before.
    generate::reset_context();
    generate::in_context(|ctx| ctx.schema = response_generator());
    generate::strip_query_null_types(false);
    generate::on_error(|e| tracing::warn!(error = %e, "OpenAPI generation"));
    let mut api = OpenApi {
        info: Info {
            title: "wm API".into(),
            version: "1.0.0".into(),
            description: Some(DESCRIPTION.into()),
            license: Some(aide::openapi::License {
                name: "Apache-2.0".into(),
                identifier: Some("Apache-2.0".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        servers: vec![Server {
            url: "/api/v1".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let _ = routes().finish_api_with(&mut api, finish);
    serde_json::to_value(&api).unwrap_or_default()
}

/// What the routes cannot say about themselves: the API key scheme, each operation's id
/// ([`OPERATION_IDS`]), the 409 a write can answer and the `Idempotency-Key` of a POST.
fn finish(t: TransformOpenApi<'_>) -> TransformOpenApi<'_> {
    let mut t = t.security_scheme(
        SECURITY_SCHEME,
        SecurityScheme::Http {
            scheme: "bearer".into(),
            bearer_format: None,
            description: Some("wm_live_… API key".into()),
            extensions: Default::default(),
        },
    );
    let api = t.inner_mut();
    let paths = api.paths.iter_mut().flat_map(|p| p.paths.iter_mut());
    for (path, item) in paths {
        let Some(item) = item.as_item_mut() else {
            continue;
        };
        for (method, op) in aide::util::iter_operations_mut(item) {
            op.operation_id = Some(operation_id(method, path).map_or_else(
                // Named in `ids.rs`; a route added without a name still gets a unique one
                // (and the test names it).
                || format!("{method}{}", path.replace(['/', '{', '}', '-'], "_")),
                str::to_owned,
            ));
            if matches!(method, "post" | "patch" | "delete")
                && let Some(responses) = op.responses.as_mut()
            {
                let conflict = generate::in_context(|ctx| errors::error_response(ctx, false));
                responses
                    .responses
                    .entry(StatusCode::Code(409))
                    .or_insert(ReferenceOr::Item(conflict));
            }
            if method == "post" {
                idempotent(op);
            }
        }
    }
    t
}

/// A 409 whose body is `T`: a conflict with fields of its own (the route declares it).
pub fn conflict<T: JsonSchema>(
    mut op: aide::transform::TransformOperation<'_>,
) -> aide::transform::TransformOperation<'_> {
    let schema = generate::in_context(|ctx| ctx.schema.subschema_for::<T>());
    let responses = op
        .inner_mut()
        .responses
        .get_or_insert_with(Default::default);
    responses.responses.insert(
        StatusCode::Code(409),
        ReferenceOr::Item(json_response("Conflict", schema)),
    );
    op
}

/// A POST takes an `Idempotency-Key` ([`crate::idempotency`]): the header, and the 422 of a
/// key used with another request (its 409 is the writes' own).
fn idempotent(op: &mut aide::openapi::Operation) {
    let schema = schemars::json_schema!({
        "type": "string",
        "minLength": 1,
        "maxLength": crate::idempotency::MAX_KEY,
        "description": "Makes a retry safe: the same key with the same request within 24 hours \
            answers the first answer again (with `Idempotent-Replayed: true`) instead of acting \
            twice. Another request with the key: 422 `IDEMPOTENCY_KEY_REUSED`; while the first \
            still runs: 409 `IDEMPOTENCY_KEY_IN_USE`. Keys belong to the API key."
    });
    op.parameters.push(ReferenceOr::Item(Parameter::Header {
        parameter_data: parameter("Idempotency-Key", false, schema, false),
        style: aide::openapi::HeaderStyle::Simple,
    }));
    if let Some(responses) = op.responses.as_mut() {
        let reused = generate::in_context(|ctx| errors::error_response(ctx, false));
        responses
            .responses
            .insert(StatusCode::Code(422), ReferenceOr::Item(reused));
    }
}

/// Responses: serialisation contract, named schemas under `/components/schemas`.
fn response_generator() -> schemars::SchemaGenerator {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    settings.contract = Contract::Serialize;
    settings.meta_schema = None;
    settings.into_generator()
}

/// The schema of `T` as the server reads it (deserialisation contract): its structs inlined,
/// its enums referred to as the components the responses use (registered in `ctx`), so a
/// value read from one answer is the very type another request takes.
pub fn request_schema_in<T: JsonSchema>(ctx: &mut aide::generate::GenContext) -> Schema {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    settings.meta_schema = None;
    let mut generator = settings.into_generator();
    let top = generator.subschema_for::<T>();
    let defs = generator.take_definitions(true);
    let mut value = top.to_value();
    resolve(&mut value, &defs, ctx.schema.definitions_mut(), 0);
    if let Some(o) = value.as_object_mut() {
        o.remove("title");
    }
    Schema::try_from(value).unwrap_or_else(|_| request_schema::<T>())
}

/// Whether a definition is an enumeration of values (a shared component): `enum`, or a
/// `oneOf` of documented `const`s.
fn is_enum(def: &Value) -> bool {
    def.get("enum").is_some()
        || def
            .get("oneOf")
            .and_then(Value::as_array)
            .is_some_and(|variants| variants.iter().all(|v| v.get("const").is_some()))
}

/// Inlines the references of `v` to `defs`, but an enum's, which stays a reference and is
/// copied into `components`.
fn resolve(
    v: &mut Value,
    defs: &serde_json::Map<String, Value>,
    components: &mut serde_json::Map<String, Value>,
    depth: usize,
) {
    const PREFIX: &str = "#/components/schemas/";
    match v {
        Value::Object(o) => {
            let target = o
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix(PREFIX))
                .map(str::to_owned);
            if let Some(name) = target
                && let Some(def) = defs.get(&name)
            {
                if is_enum(def) || depth > 16 {
                    components.entry(name).or_insert_with(|| def.clone());
                    return;
                }
                // The definition in place of the reference; the reference's own keys (a
                // field's description) win.
                o.remove("$ref");
                let mut merged = def.clone();
                if let Some(m) = merged.as_object_mut() {
                    for (k, val) in std::mem::take(o) {
                        m.insert(k, val);
                    }
                }
                *v = merged;
                resolve(v, defs, components, depth + 1);
                return;
            }
            for child in o.values_mut() {
                resolve(child, defs, components, depth);
            }
        }
        Value::Array(a) => {
            for child in a {
                resolve(child, defs, components, depth);
            }
        }
        _ => {}
    }
}

/// The schema of `T` as the server reads it (deserialisation contract), inlined.
pub fn request_schema<T: JsonSchema>() -> Schema {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
    }
    schema
}

/// One `in: query` parameter per property of `schema`; an array is a comma-separated or
/// repeated list (`ids=a,b` or `ids=a&ids=b`).
pub fn query_parameters(schema: &Schema) -> Vec<Parameter> {
    let required = |name: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|v| v == name))
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .filter_map(|(name, s)| {
            let json_schema = Schema::try_from(s.clone()).ok()?;
            let array = match s.get("type") {
                Some(Value::String(t)) => t == "array",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                _ => false,
            };
            Some(Parameter::Query {
                parameter_data: parameter(name, required(name), json_schema, array),
                allow_reserved: false,
                style: QueryStyle::Form,
                allow_empty_value: None,
            })
        })
        .collect()
}

/// A parameter's common fields: the schema only, no description of its own (the schema
/// has it); a `list` is sent as `a,b` (`explode: false`).
pub fn parameter(name: &str, required: bool, json_schema: Schema, list: bool) -> ParameterData {
    ParameterData {
        name: name.to_owned(),
        description: None,
        required,
        deprecated: None,
        format: ParameterSchemaOrContent::Schema(SchemaObject {
            json_schema,
            example: None,
            external_docs: None,
        }),
        example: None,
        examples: Default::default(),
        explode: list.then_some(false),
        extensions: Default::default(),
    }
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
