//! Serde for a value written as one of a list of names (`provider = "claude"`), when the
//! list is derived rather than declared as an enum's variants: read and written as serde's
//! derive does a unit-only enum, so files, JSON and error messages ("unknown variant `x`,
//! expected one of `a`, `b`") are the same as with the derive.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, EnumAccess, VariantAccess, Visitor};
use serde::{Deserializer, Serializer};

/// Writes `name`, one of `names`, as the unit variant of the enum `kind`.
pub(crate) fn serialize<S: Serializer>(
    serializer: S,
    kind: &'static str,
    names: &'static [&'static str],
    name: &'static str,
) -> Result<S::Ok, S::Error> {
    let index = names.iter().position(|n| *n == name).unwrap_or_default();
    let index = u32::try_from(index).unwrap_or_default();
    serializer.serialize_unit_variant(kind, index, name)
}

/// Reads one of `names` as a unit variant of the enum `kind`, and `pick`s its value.
pub(crate) fn deserialize<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    kind: &'static str,
    names: &'static [&'static str],
    pick: fn(&str) -> Option<T>,
) -> Result<T, D::Error> {
    deserializer.deserialize_enum(
        kind,
        names,
        Named {
            kind,
            names,
            pick,
            value: PhantomData,
        },
    )
}

struct Named<T> {
    kind: &'static str,
    names: &'static [&'static str],
    pick: fn(&str) -> Option<T>,
    value: PhantomData<T>,
}

impl<'de, T> Visitor<'de> for Named<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        write!(formatter, "enum {}", self.kind)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<T, A::Error> {
        let (name, variant): (String, _) = data.variant()?;
        let value =
            (self.pick)(&name).ok_or_else(|| de::Error::unknown_variant(&name, self.names))?;
        variant.unit_variant()?;
        Ok(value)
    }
}
