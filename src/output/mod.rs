//! What the user sees: the results rendered as text, JSON or stream-json ([`render`]),
//! a status line per running agent ([`live`]), codecrew's own colours ([`color`]) and the
//! questions the permission policy asks at the terminal ([`ask`]). Everything printed
//! passes through one door, [`console`], which makes text codecrew did not compose inert.

pub mod ask;
pub mod color;
pub mod console;
pub mod live;
pub mod markdown;
pub mod render;
