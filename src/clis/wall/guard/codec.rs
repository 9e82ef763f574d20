//! How a guard's bytes and names are written in its journal ([`super::journal`]): as
//! hex, so that any file and any name (not only UTF-8 ones) go through JSON unchanged.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn decode<E: serde::de::Error>(text: &str) -> Result<Vec<u8>, E> {
    if !text.len().is_multiple_of(2) {
        return Err(E::custom("odd hex length"));
    }
    (0..text.len())
        .step_by(2)
        .map(|at| {
            text.get(at..at + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| E::custom("not hex"))
        })
        .collect()
}

/// `Vec<u8>` as hex.
pub mod bytes {
    use super::*;

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        encode(bytes).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        decode(&String::deserialize(deserializer)?)
    }
}

/// `Option<Vec<u8>>` as hex or null.
pub mod maybe_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(
        bytes: &Option<Vec<u8>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        bytes.as_deref().map(encode).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| decode(&text))
            .transpose()
    }
}

/// A path as the hex of its bytes.
pub mod path {
    use super::*;

    pub fn serialize<S: Serializer>(
        path: &std::path::Path,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        encode(path.as_os_str().as_bytes()).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        let bytes = decode(&String::deserialize(deserializer)?)?;
        Ok(PathBuf::from(OsString::from_vec(bytes)))
    }
}

/// A map by path, as a list of (hex path, value) pairs.
pub mod by_path {
    use super::*;

    pub fn serialize<S: Serializer, T: Serialize>(
        map: &BTreeMap<PathBuf, T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        map.iter()
            .map(|(name, value)| (encode(name.as_os_str().as_bytes()), value))
            .collect::<Vec<_>>()
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<PathBuf, T>, D::Error> {
        Vec::<(String, T)>::deserialize(deserializer)?
            .into_iter()
            .map(|(name, value)| {
                let bytes = decode(&name)?;
                Ok((PathBuf::from(OsString::from_vec(bytes)), value))
            })
            .collect()
    }
}
