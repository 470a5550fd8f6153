//! [`Plan`]: what a format's editor hands back, before anything is
//! written. The format has checked its input; carrying the plan out is the
//! same for every format (`output.rs`).

/// The writes an edit needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Positioned writes into the input itself, none past its end: the tag
    /// fits where the old one and its padding were.
    InPlace(Vec<(u64, Vec<u8>)>),
    /// Positioned writes into the input, all before `at`, and `tail`
    /// written at `at`, which then ends the file (it grows): a tag that
    /// moves to the end (Matroska Tags).
    Append {
        writes: Vec<(u64, Vec<u8>)>,
        at: u64,
        tail: Vec<u8>,
    },
    /// A new file made of these pieces in order.
    Copy(Vec<Piece>),
}

/// One piece of a copied file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// New bytes (a tag, a block header).
    Bytes(Vec<u8>),
    /// `len` bytes of the input from `start`, copied unchanged.
    Range { start: u64, len: u64 },
    /// `len` bytes of Ogg pages from `start`, the pages of stream `serial`
    /// with their sequence numbers moved by `delta` and their CRCs
    /// recomputed (one page in memory at a time).
    OggRenumber {
        start: u64,
        len: u64,
        serial: u32,
        delta: i64,
    },
    /// `len` zero bytes (the content of a padding box), written from a
    /// fixed buffer: no memory sized by `len`.
    Zeros(u64),
}

impl Plan {
    /// Bytes the plan writes.
    pub fn bytes(&self) -> u64 {
        match self {
            Plan::InPlace(w) => w.iter().map(|(_, b)| b.len() as u64).sum(),
            Plan::Append { writes, tail, .. } => {
                writes.iter().map(|(_, b)| b.len() as u64).sum::<u64>() + tail.len() as u64
            }
            Plan::Copy(p) => p
                .iter()
                .map(|p| match p {
                    Piece::Bytes(b) => b.len() as u64,
                    Piece::Range { len, .. } | Piece::Zeros(len) | Piece::OggRenumber { len, .. } => *len,
                })
                .sum(),
        }
    }
}
