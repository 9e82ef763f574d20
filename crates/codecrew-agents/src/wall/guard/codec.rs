//! How a guard's bytes and names are written in its journal ([`super::journal`]): as
//! hex, so that any file and any name (not only UTF-8 ones) go through JSON unchanged.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    text
}

fn decode<E: serde::de::Error>(text: &str) -> Result<Vec<u8>, E> {
    if !text.len().is_multiple_of(2) {
        return Err(E::custom("odd hex length"));
    }
    let digit = |byte: u8| {
        char::from(byte)
            .to_digit(16)
            .ok_or_else(|| E::custom("not hex"))
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| Ok((digit(pair[0])? << 4 | digit(pair[1])?) as u8))
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

/// A set of names, as a list of hex paths.
pub mod names {
    use super::*;
    use std::collections::BTreeSet;

    pub fn serialize<S: Serializer>(
        names: &BTreeSet<PathBuf>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        names
            .iter()
            .map(|name| encode(name.as_os_str().as_bytes()))
            .collect::<Vec<_>>()
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeSet<PathBuf>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .into_iter()
            .map(|name| Ok(PathBuf::from(OsString::from_vec(decode(&name)?))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bytes_go_through_hex_unchanged() {
        let bytes: Vec<u8> = (0..=255).collect();
        let text = super::encode(&bytes);
        assert_eq!(&text[..6], "000102");
        assert_eq!(super::decode::<serde_json::Error>(&text).unwrap(), bytes);
        assert!(super::decode::<serde_json::Error>("0g").is_err());
        assert!(super::decode::<serde_json::Error>("012").is_err());
    }
}
