//! The bearer token of `codecrew mcp --http`: every request but `/health` must carry it.
//!
//! Where it comes from, first found: `--token` or `CODECREW_MCP_TOKEN`, the user's config
//! (`[mcp_server] token`, never a project's: a checkout could name a token it knows), the
//! token stored by an earlier start, else a new one, generated from the OS's random source,
//! stored where only the user can read it and shown once.

use std::io;
use std::path::{Path, PathBuf};

use codecrew_config::secret_file::{self, SecretFileError};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A token shorter than this is refused: it could be guessed by a page or a process that
/// may try many times.
pub const MIN_LEN: usize = 16;

/// The token clients must present, kept only as its digest so that a comparison takes
/// the same time whatever the presented token's length or first wrong byte.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A token from its text; refused when too short or not printable ASCII (it travels in
    /// an HTTP header).
    pub fn new(text: &str) -> Result<Self, TokenError> {
        let text = text.trim();
        if text.len() < MIN_LEN {
            return Err(TokenError::TooShort);
        }
        if !text.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(TokenError::NotPrintable);
        }
        Ok(Token {
            digest: Sha256::digest(text.as_bytes()).into(),
        })
    }

    /// Whether `presented` is this token, in constant time.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented).into();
        bool::from(self.digest.ct_eq(&digest))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("the MCP token must be at least {MIN_LEN} characters long")]
    TooShort,
    #[error("the MCP token may hold only printable ASCII characters without spaces")]
    NotPrintable,
    #[error(
        "{}: {reason}; remove it (a new token is then generated) or set CODECREW_MCP_TOKEN",
        path.display()
    )]
    Unsafe { path: PathBuf, reason: String },
    #[error("cannot keep the MCP token in {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "no place to keep the MCP token: neither XDG_STATE_HOME nor HOME is set; set \
         CODECREW_MCP_TOKEN or pass --token"
    )]
    NoStateDir,
}

/// Where the token came from, so the server can say how to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--token` or `CODECREW_MCP_TOKEN`.
    Given,
    /// The user's config file.
    Config,
    /// Stored by an earlier start.
    Stored(PathBuf),
    /// Generated now and stored there, with its text: the only time codecrew has it to
    /// show.
    Generated(PathBuf, Shown),
}

/// A generated token's text, for the one time it is shown; never in a debug print.
#[derive(Clone, PartialEq, Eq)]
pub struct Shown(String);

impl Shown {
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shown(..)")
    }
}

/// The token the server checks, and where it came from.
#[derive(Debug)]
pub struct Resolved {
    pub token: Token,
    pub source: Source,
}

/// The stored token's place: `$XDG_STATE_HOME/codecrew/mcp-token`, else
/// `~/.local/state/codecrew/mcp-token`.
pub fn stored_path() -> Option<PathBuf> {
    codecrew_policy::state_folder::location().map(|dir| dir.join("mcp-token"))
}

/// The token, from the first place that has one (see the module's comment).
pub fn resolve(given: Option<&str>, configured: Option<&str>) -> Result<Resolved, TokenError> {
    if let Some(text) = given {
        return Ok(Resolved {
            token: Token::new(text)?,
            source: Source::Given,
        });
    }
    if let Some(text) = configured {
        return Ok(Resolved {
            token: Token::new(text)?,
            source: Source::Config,
        });
    }
    let path = stored_path().ok_or(TokenError::NoStateDir)?;
    stored_or_generated(&path)
}

/// The token stored at `path`, or a new one written there.
pub fn stored_or_generated(path: &Path) -> Result<Resolved, TokenError> {
    match read_stored(path)? {
        Some(text) => Ok(Resolved {
            token: Token::new(&text)?,
            source: Source::Stored(path.to_owned()),
        }),
        None => {
            let text = generate(path)?;
            Ok(Resolved {
                token: Token::new(&text)?,
                source: Source::Generated(path.to_owned(), Shown(text)),
            })
        }
    }
}

/// The stored token, if there is one ([`secret_file::read`]: refused when others could
/// know it).
fn read_stored(path: &Path) -> Result<Option<String>, TokenError> {
    secret_file::read(path).map_err(TokenError::from)
}

/// A new token (32 random bytes as hex), stored at `path` where only the user can read it.
fn generate(path: &Path) -> Result<String, TokenError> {
    secret_file::create(path, 32).map_err(TokenError::from)
}

impl From<SecretFileError> for TokenError {
    fn from(error: SecretFileError) -> Self {
        match error {
            SecretFileError::Unsafe { path, reason } => TokenError::Unsafe { path, reason },
            SecretFileError::Io { path, source } => TokenError::Io { path, source },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_token_matches_itself_only() {
        let token = Token::new("0123456789abcdef-long-enough").unwrap();
        assert!(token.matches(b"0123456789abcdef-long-enough"));
        assert!(!token.matches(b"0123456789abcdef-long-enougH"));
        assert!(!token.matches(b"0123456789abcdef"));
        assert!(!token.matches(b""));
    }

    #[test]
    fn short_or_unprintable_tokens_are_refused() {
        assert!(matches!(Token::new("short"), Err(TokenError::TooShort)));
        assert!(matches!(
            Token::new("0123456789 abcdefgh"),
            Err(TokenError::NotPrintable)
        ));
        assert!(matches!(
            Token::new("0123456789\u{7}abcdefgh"),
            Err(TokenError::NotPrintable)
        ));
    }

    #[test]
    fn the_given_token_wins_then_the_configured_one() {
        let given = resolve(
            Some("given-token-0123456789"),
            Some("config-token-0123456789"),
        )
        .unwrap();
        assert_eq!(given.source, Source::Given);
        assert!(given.token.matches(b"given-token-0123456789"));
        let configured = resolve(None, Some("config-token-0123456789")).unwrap();
        assert_eq!(configured.source, Source::Config);
        assert!(configured.token.matches(b"config-token-0123456789"));
    }

    #[test]
    fn a_generated_token_is_private_shown_once_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/codecrew/mcp-token");
        let first = stored_or_generated(&path).unwrap();
        let Source::Generated(at, shown) = &first.source else {
            panic!("generated: {:?}", first.source)
        };
        assert_eq!(at, &path);
        let shown = shown.text().to_owned();
        assert_eq!(shown.len(), 64);
        assert!(
            !format!("{:?}", first.source).contains(&shown),
            "no debug print shows it"
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let folder = fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(folder & 0o777, 0o700);
        let second = stored_or_generated(&path).unwrap();
        assert_eq!(
            second.source,
            Source::Stored(path.clone()),
            "shown only when generated"
        );
        assert!(second.token.matches(shown.as_bytes()));
    }

    #[test]
    fn a_stored_token_others_could_know_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-token");
        fs::write(&path, "0123456789abcdef0123\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let error = stored_or_generated(&path).unwrap_err().to_string();
        assert!(error.contains("0600"), "{error}");

        let target = dir.path().join("elsewhere");
        fs::write(&target, "0123456789abcdef0123\n").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("linked-token");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = stored_or_generated(&link).unwrap_err().to_string();
        assert!(error.contains("symbolic link"), "{error}");
    }
}
