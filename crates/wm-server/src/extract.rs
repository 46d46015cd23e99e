//! Extractors: the authenticated caller with a required scope, validated JSON bodies and
//! queries (class-validator messages), and path ids (a non-UUID id is a 404). Each one also
//! documents itself in the OpenAPI document ([`aide::OperationInput`]), so a route's scope,
//! parameters and body are declared once, by its handler's arguments.

use std::marker::PhantomData;

use aide::OperationInput;
use aide::generate::GenContext;
use aide::openapi::{Operation, Parameter, PathStyle, ReferenceOr};
use aide::operation::{add_parameters, set_body};
use axum::body::Bytes;
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use schemars::{JsonSchema, json_schema};
use uuid::Uuid;
use wm_core::Validated;
use wm_types::enums::ErrorCode;
use wm_types::enums::Scope;

use crate::error::{ApiError, body_timeout, is_timeout};
use crate::keys::AuthContext;
use crate::openapi;

/// A scope a route requires, as a type (so the check runs as an extractor, before the
/// query and body are validated).
pub trait RequiredScope {
    /// The scope.
    const SCOPE: Scope;
}

macro_rules! scopes {
    ($($name:ident => $scope:ident),+ $(,)?) => {$(
        #[doc = concat!("Requires `", stringify!($scope), "`.")]
        pub struct $name;
        impl RequiredScope for $name {
            const SCOPE: Scope = Scope::$scope;
        }
    )+};
}
scopes!(
    ContactsRead => ContactsRead,
    ContactsWrite => ContactsWrite,
    CampaignsRead => CampaignsRead,
    ConversationsRead => ConversationsRead,
    ConversationsWrite => ConversationsWrite,
    AutomationsRead => AutomationsRead,
    ReportsRead => ReportsRead,
    CampaignsWrite => CampaignsWrite,
    WebhooksRead => WebhooksRead,
    WebhooksWrite => WebhooksWrite,
);

/// The caller, checked for scope `S`.
pub struct Authed<S>(pub AuthContext, PhantomData<S>);

impl<S> std::ops::Deref for Authed<S> {
    type Target = AuthContext;
    fn deref(&self) -> &AuthContext {
        &self.0
    }
}

impl<S: RequiredScope, St: Send + Sync> FromRequestParts<St> for Authed<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let ctx = authenticated(parts)?;
        if !ctx.scopes.contains(&S::SCOPE) {
            return Err(ApiError::business(
                StatusCode::FORBIDDEN,
                Some(ErrorCode::ApiKeyScopeMissing),
                format!("This API key lacks the scope {}.", S::SCOPE),
            ));
        }
        Ok(Authed(ctx, PhantomData))
    }
}

/// The caller, checked for scope `A` or scope `B` (a read that belongs to two resources: a
/// contact's messages are read with either `contacts:read` or `conversations:read`).
pub struct AuthedEither<A, B>(pub AuthContext, PhantomData<(A, B)>);

impl<A, B> std::ops::Deref for AuthedEither<A, B> {
    type Target = AuthContext;
    fn deref(&self) -> &AuthContext {
        &self.0
    }
}

impl<A: RequiredScope, B: RequiredScope, St: Send + Sync> FromRequestParts<St>
    for AuthedEither<A, B>
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, ApiError> {
        let ctx = authenticated(parts)?;
        if !ctx.scopes.contains(&A::SCOPE) && !ctx.scopes.contains(&B::SCOPE) {
            return Err(ApiError::business(
                StatusCode::FORBIDDEN,
                Some(ErrorCode::ApiKeyScopeMissing),
                format!(
                    "This API key lacks the scope {} (or {}).",
                    A::SCOPE,
                    B::SCOPE
                ),
            ));
        }
        Ok(AuthedEither(ctx, PhantomData))
    }
}

impl<A: RequiredScope, B: RequiredScope> OperationInput for AuthedEither<A, B> {
    fn operation_input(_: &mut GenContext, op: &mut Operation) {
        op.description = Some(format!(
            "Requires the scope `{}` or `{}`.",
            A::SCOPE,
            B::SCOPE
        ));
        op.security
            .push([(openapi::SECURITY_SCHEME.to_owned(), Vec::new())].into());
    }
}

/// The caller the auth middleware put on the request.
fn authenticated(parts: &Parts) -> Result<AuthContext, ApiError> {
    parts
        .extensions
        .get::<AuthContext>()
        .cloned()
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("route mounted without api_key_auth")))
}

/// The API key, with the scope in the operation's description.
impl<S: RequiredScope> OperationInput for Authed<S> {
    fn operation_input(_: &mut GenContext, op: &mut Operation) {
        op.description = Some(format!("Requires the scope `{}`.", S::SCOPE));
        op.security
            .push([(openapi::SECURITY_SCHEME.to_owned(), Vec::new())].into());
    }
}

/// Whether a `Content-Type` names JSON (`application/json` or `application/*+json`, any
/// parameters such as `charset`).
fn is_json_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    let Some((kind, sub)) = essence.split_once('/') else {
        return false;
    };
    kind.eq_ignore_ascii_case("application")
        && (sub.eq_ignore_ascii_case("json") || sub.to_ascii_lowercase().ends_with("+json"))
}

/// Reads a request body as JSON. An empty (or blank) body is `{}`; a non-empty one must say
/// it is JSON (415 otherwise) and parse (400 otherwise); a body that arrives too slowly is
/// a 408 (the server's request-body timeout).
async fn json_body<S: Send + Sync>(req: Request, state: &S) -> Result<serde_json::Value, ApiError> {
    let content_type = req
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .map(|v| v.to_str().map(str::to_owned).unwrap_or_default());
    let bytes = Bytes::from_request(req, state).await.map_err(|e| {
        if is_timeout(&e) {
            body_timeout()
        } else {
            ApiError::invalid(format!("request body could not be read: {e}"))
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    if !content_type.as_deref().is_some_and(is_json_type) {
        return Err(ApiError::business(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            "Request bodies must be JSON, sent with Content-Type: application/json.",
        ));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::invalid(format!("request body is not valid JSON: {e}")))
}

/// A JSON body checked against `T`'s schema. An empty body counts as `{}`.
pub struct ValidatedJson<T>(pub T);

impl<T: Validated, S: Send + Sync> FromRequest<S> for ValidatedJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let value = json_body(req, state).await?;
        wm_core::validate::parse_value(T::schema(), value)
            .map(ValidatedJson)
            .map_err(ApiError::Validation)
    }
}

/// A JSON body, its schema inlined: required when the schema has required properties or
/// needs at least one (`minProperties`, a choice of sources); an empty body means `{}`, so
/// a body of optional properties may be left out.
impl<T: JsonSchema> OperationInput for ValidatedJson<T> {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        let schema = openapi::request_schema_in::<T>(ctx);
        let required = schema
            .get("required")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|r| !r.is_empty())
            || schema
                .get("minProperties")
                .and_then(serde_json::Value::as_u64)
                .is_some_and(|n| n > 0);
        let mut body = openapi::request_body("application/json", schema);
        body.required = required;
        set_body(ctx, op, body);
    }
}

/// For routes that take no body (`pause`, `resume`, deletes, …): no body or `{}` is
/// accepted; any property is refused as an unknown field, as on every other route.
pub struct NoBody;

impl<S: Send + Sync> FromRequest<S> for NoBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        static EMPTY: std::sync::LazyLock<wm_core::validate::Schema> =
            std::sync::LazyLock::new(wm_core::validate::Schema::new);
        let mut value = json_body(req, state).await?;
        EMPTY.check(&mut value).map_err(ApiError::Validation)?;
        Ok(NoBody)
    }
}

impl OperationInput for NoBody {}

fn query_pairs(parts: &Parts) -> Vec<(String, String)> {
    parts
        .uri
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// A query string checked against `T`'s schema; unknown parameters are refused.
pub struct ValidatedQuery<T>(pub T);

impl<T: Validated, S: Send + Sync> FromRequestParts<S> for ValidatedQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let schema = T::schema();
        let value = schema.query_value(&query_pairs(parts));
        wm_core::validate::parse_value(schema, value)
            .map(ValidatedQuery)
            .map_err(ApiError::Validation)
    }
}

/// One query parameter per field of `T`.
impl<T: JsonSchema> OperationInput for ValidatedQuery<T> {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        let params = openapi::query_parameters(&openapi::request_schema_in::<T>(ctx));
        add_parameters(ctx, op, params);
    }
}

/// For routes that take no query parameters: any parameter is refused.
pub struct NoQuery;

impl<S: Send + Sync> FromRequestParts<S> for NoQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let pairs = query_pairs(parts);
        if pairs.is_empty() {
            return Ok(NoQuery);
        }
        let mut seen: Vec<String> = Vec::new();
        for (k, _) in pairs {
            let m = format!("property {k} should not exist");
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        Err(ApiError::Validation(seen))
    }
}

impl OperationInput for NoQuery {}

/// The UUID in path parameter `name`; anything else is a 404 for `what`, as an id that names
/// nothing. A path with bytes that are not UTF-8 has no readable parameters at all (axum
/// decodes them together), so it is the 404 of the first id read.
async fn path_uuid(parts: &mut Parts, name: &str, what: &str) -> Result<Uuid, ApiError> {
    let params = match RawPathParams::from_request_parts(parts, &()).await {
        Ok(params) => params,
        Err(RawPathParamsRejection::InvalidUtf8InPathParam(_)) => {
            return Err(ApiError::not_found(what));
        }
        Err(e) => return Err(ApiError::Internal(anyhow::anyhow!("path parameters: {e}"))),
    };
    let raw = params
        .iter()
        .find_map(|(k, v)| (k == name).then_some(v))
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("the route has no {{{name}}}")))?;
    if wm_core::validate::is_uuid(raw) {
        Uuid::parse_str(raw).map_err(|_| ApiError::not_found(what))
    } else {
        Err(ApiError::not_found(what))
    }
}

/// Documents path parameter `name` as a required UUID. Path parameters come first, in path
/// order, whichever extractor runs first.
fn document_path_uuid(op: &mut Operation, name: &str) {
    let schema = json_schema!({"type": "string", "format": "uuid"});
    let param = Parameter::Path {
        parameter_data: openapi::parameter(name, true, schema, false),
        style: PathStyle::Simple,
    };
    let at = op
        .parameters
        .iter()
        .take_while(|p| matches!(p, ReferenceOr::Item(Parameter::Path { .. })))
        .count();
    op.parameters.insert(at, ReferenceOr::Item(param));
}

/// A typed path id per resource: the parameter it reads, the resource its 404 names and its
/// documentation come from one declaration. Handlers take it after the query extractor and
/// before the body: a bad query is a 400 first, a bad id a 404 before the body is read.
macro_rules! path_ids {
    ($($name:ident($param:literal) => $what:literal;)+) => {$(
        #[doc = concat!("The `{", $param, "}` of a path, a UUID; anything else is a 404 `", $what, " not found`.")]
        pub struct $name(pub Uuid);

        impl<S: Send + Sync> FromRequestParts<S> for $name {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
                path_uuid(parts, $param, $what).await.map($name)
            }
        }

        impl OperationInput for $name {
            fn operation_input(_: &mut GenContext, op: &mut Operation) {
                document_path_uuid(op, $param);
            }
        }
    )+};
}
path_ids! {
    ContactId("id") => "Contact";
    ImportId("id") => "Import";
    MediaId("id") => "Media";
    CampaignId("id") => "Campaign";
    AutomationId("id") => "Automation";
    ConversationId("id") => "Conversation";
    WebhookId("id") => "Webhook";
    DeliveryId("deliveryId") => "Delivery";
    OrgId("orgId") => "Organization";
    ApiKeyId("id") => "API key";
    DealId("id") => "Deal";
    PhoneNumberId("id") => "Phone number";
    ChannelId("channelId") => "Channel";
}

/// What an upload route's form holds: its 415 message and its documented parts.
pub trait FormSpec {
    /// The 415's message for any other body.
    const WHAT: &'static str;
    /// The form's JSON Schema (an object of its parts) for the OpenAPI document.
    fn schema(ctx: &mut GenContext) -> schemars::Schema;
    /// The content type of each part that is not a plain string (`options` is JSON), for
    /// the document's `encoding`: generators send each part as its encoding says.
    const ENCODING: &'static [(&'static str, &'static str)] = &[];
}

/// A file part's schema: binary, as both OpenAPI 3.0 (`format`) and 3.1
/// (`contentMediaType`) spell it, so every generator sends it as a file.
pub fn file_part() -> serde_json::Value {
    serde_json::json!({"type": "string", "format": "binary", "contentMediaType": "application/octet-stream"})
}

/// A `multipart/form-data` body of the form `F` (any other body is a 415 naming it),
/// documented as `F` says: the one way upload routes read their form.
pub struct MultipartForm<F>(pub axum::extract::Multipart, pub PhantomData<F>);

impl<F: FormSpec, S: Send + Sync> FromRequest<S> for MultipartForm<F> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        axum::extract::Multipart::from_request(req, state)
            .await
            .map(|m| MultipartForm(m, PhantomData))
            .map_err(|_| ApiError::business(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, F::WHAT))
    }
}

impl<F: FormSpec> OperationInput for MultipartForm<F> {
    fn operation_input(ctx: &mut GenContext, op: &mut Operation) {
        let mut body = crate::openapi::request_body("multipart/form-data", F::schema(ctx));
        body.required = true;
        if let Some(media) = body.content.get_mut("multipart/form-data") {
            for (part, content_type) in F::ENCODING {
                media.encoding.insert(
                    (*part).to_owned(),
                    aide::openapi::Encoding {
                        content_type: Some((*content_type).to_owned()),
                        ..Default::default()
                    },
                );
            }
        }
        set_body(ctx, op, body);
    }
}
