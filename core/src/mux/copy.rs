//! Copying a demuxer into a muxer: the remux loop every caller writes
//! (the `mediaslice remux` command, the tests), with the tracks the target
//! format cannot carry left out.

use crate::demux::Demuxer;
use crate::error::{ErrorKind, Result};
use crate::format::mux_traits::TrackSpec;
use crate::limits::MAX_TRACKS;
use crate::mux::Muxer;
use crate::sink::Sink;
use crate::sink::SpillStore;
use crate::source::Source;
use crate::types::Packet;

/// For each input track, its index in the muxer, or `None` when the
/// target format refused its codec (`Unsupported`).
pub type TrackMap = [Option<usize>; MAX_TRACKS];

/// Declares every track of `demuxer` in `muxer` with its codec
/// configuration; a track the format cannot carry is left out (`None` in
/// the map), any other refusal is an error.
///
/// Errors: the demuxer's (reading a configuration) and the muxer's but
/// `Unsupported`.
pub fn add_tracks<S: Source, K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    demuxer: &mut Demuxer<S>,
    muxer: &mut Muxer<K, B, P>,
) -> Result<TrackMap> {
    let mut map = [None; MAX_TRACKS];
    for (i, slot) in map.iter_mut().enumerate().take(demuxer.tracks().len()) {
        let Some(track) = demuxer.tracks().get(i).cloned() else {
            break;
        };
        let config = demuxer.codec_config(i)?;
        match muxer.add_track(&TrackSpec::new(&track).with_config(config)) {
            Ok(j) => *slot = Some(j),
            Err(e) if e.kind() == ErrorKind::Unsupported => {}
            Err(e) => return Err(e),
        }
    }
    Ok(map)
}

/// Writes every packet of `demuxer` of a track in `map` to `muxer`, with
/// its track index mapped; returns the packets written. Nothing is
/// allocated or copied: each payload goes from the demuxer's borrow to the
/// sink.
///
/// Errors: the demuxer's and the muxer's.
pub fn copy_packets<S: Source, K: Sink, B: AsMut<[u8]>, P: SpillStore>(
    demuxer: &mut Demuxer<S>,
    muxer: &mut Muxer<K, B, P>,
    map: &TrackMap,
) -> Result<u64> {
    let mut n = 0u64;
    while let Some(p) = demuxer.next_packet()? {
        if let Some(&Some(track)) = map.get(p.track) {
            muxer.write_packet(&Packet { track, ..p })?;
            n += 1;
        }
    }
    Ok(n)
}
