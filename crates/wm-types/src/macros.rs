/// Defines a wire enum: fixed strings on the wire, an `Unknown` variant that absorbs values
/// a newer server may send (so old clients keep working), `ALL` for validation messages,
/// and a JSON schema listing the known values.
///
/// A value may take older spellings after its own (`Text = "TEXT" | "text"`): they are
/// read as it, written never, and named in the schema's `x-aliases` (which the validator
/// reads and the document's readers ignore), so clients written against an earlier
/// spelling keep working while the document shows one.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vmeta])* #[doc = concat!("`", $wire, "`")] $variant,)+
            /// A value this version does not know yet.
            Unknown,
        }

        impl $name {
            /// Every known value, in the spec's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire spelling.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                    $name::Unknown => "UNKNOWN",
                }
            }

            /// Parses a known wire spelling (or an older one it still takes).
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($wire $(| $alias)* => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The known wire spellings, for validation messages.
            pub fn wire_values() -> Vec<&'static str> {
                Self::ALL.iter().map(|v| v.as_str()).collect()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Ok(Self::parse(&s).unwrap_or($name::Unknown))
            }
        }

        $crate::macros::stored_enum!($name);

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let aliases: Vec<(&str, &str)> = vec![$($(($alias, $wire),)*)+];
                let mut schema = schemars::json_schema!({ "type": "string", "enum": [$($wire),+] });
                if !aliases.is_empty() {
                    let map: serde_json::Map<String, serde_json::Value> = aliases
                        .into_iter()
                        .map(|(a, w)| (a.to_owned(), serde_json::Value::from(w)))
                        .collect();
                    schema.insert("x-aliases".into(), serde_json::Value::Object(map));
                }
                schema
            }
        }
    };
}

/// With the `sea-orm` feature, a wire enum is also a sea-orm column type stored as its wire
/// spelling, so a storage layer keeps typed statuses instead of strings it converts by hand.
/// A stored value this version does not know reads as `Unknown`, as on the wire: during a
/// rolling upgrade a newer replica may write a value an older one reads.
#[cfg(feature = "sea-orm")]
macro_rules! stored_enum {
    ($name:ident) => {
        impl From<$name> for sea_orm::Value {
            fn from(v: $name) -> Self {
                sea_orm::Value::String(Some(v.as_str().to_owned()))
            }
        }

        impl sea_orm::TryGetable for $name {
            fn try_get_by<I: sea_orm::ColIdx>(
                res: &sea_orm::QueryResult,
                idx: I,
            ) -> Result<Self, sea_orm::TryGetError> {
                let s = String::try_get_by(res, idx)?;
                Ok(Self::parse(&s).unwrap_or($name::Unknown))
            }
        }

        impl sea_orm::sea_query::ValueType for $name {
            fn try_from(v: sea_orm::Value) -> Result<Self, sea_orm::sea_query::ValueTypeErr> {
                let s = <String as sea_orm::sea_query::ValueType>::try_from(v)?;
                Ok(Self::parse(&s).unwrap_or($name::Unknown))
            }

            fn type_name() -> String {
                stringify!($name).to_owned()
            }

            fn array_type() -> sea_orm::sea_query::ArrayType {
                sea_orm::sea_query::ArrayType::String
            }

            fn column_type() -> sea_orm::sea_query::ColumnType {
                sea_orm::sea_query::ColumnType::Text
            }
        }

        impl sea_orm::sea_query::Nullable for $name {
            fn null() -> sea_orm::Value {
                sea_orm::Value::String(None)
            }
        }

        impl sea_orm::IntoActiveValue<$name> for $name {
            fn into_active_value(self) -> sea_orm::ActiveValue<$name> {
                sea_orm::ActiveValue::Set(self)
            }
        }
    };
}

/// Without the `sea-orm` feature a wire enum is only a wire type.
#[cfg(not(feature = "sea-orm"))]
macro_rules! stored_enum {
    ($name:ident) => {};
}

pub(crate) use stored_enum;
