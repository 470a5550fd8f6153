//! [`Plan`]: what a format's editor hands back, before anything is
//! written. The format has checked its input; carrying the plan out is the
//! same for every format (`output.rs`).

/// The writes an edit needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Positioned writes into the input itself, none past its end: the tag
    /// fits where the old one and its padding were.
    InPlace(Vec<(u64, Vec<u8>)>),
    /// Positioned writes into the input, all before `at`, and the pieces
    /// of `tail` written at `at`, which then end the file (it grows): a
    /// tag that moves to the end (Matroska Tags, an MP4 `moov` that was
    /// the last box). The tail is written and synced before the writes,
    /// which make the file point at it.
    Append {
        writes: Vec<(u64, Vec<u8>)>,
        at: u64,
        tail: Vec<Piece>,
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
    /// The MP4 chunk offset box (`stco` or `co64`) of `len` bytes at
    /// `start` of the input, every offset at or past `from` moved by
    /// `delta`, written as a `co64` when `co64`: `out_len` bytes, one
    /// block of entries in memory at a time.
    ChunkOffsets {
        start: u64,
        len: u64,
        from: u64,
        delta: u64,
        co64: bool,
        out_len: u64,
    },
}

impl Plan {
    /// Bytes the plan writes.
    pub fn bytes(&self) -> u64 {
        match self {
            Plan::InPlace(w) => w.iter().map(|(_, b)| b.len() as u64).sum(),
            Plan::Append { writes, tail, .. } => {
                writes.iter().map(|(_, b)| b.len() as u64).sum::<u64>() + tail.iter().map(Piece::len).sum::<u64>()
            }
            Plan::Copy(p) => p.iter().map(Piece::len).sum(),
        }
    }
}

impl Piece {
    /// Bytes the piece writes.
    pub fn len(&self) -> u64 {
        match self {
            Piece::Bytes(b) => b.len() as u64,
            Piece::Range { len, .. } | Piece::Zeros(len) | Piece::OggRenumber { len, .. } => *len,
            Piece::ChunkOffsets { out_len, .. } => *out_len,
        }
    }

    /// True when the piece writes nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
