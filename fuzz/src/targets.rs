//! The targets.

use super::*;

/// A parser target: open `data` as `kind` and exercise everything.
pub fn run_parser(data: &[u8], kind: FormatKind) {
    let opened = no_alloc("open", || {
        Demuxer::open_as(SliceSource::new(data), kind, Limits::default())
    });
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

/// A parser target for a format whose packets may be joined in scratch
/// (Ogg pages, PES, ASF fragments, Matroska header stripping): like
/// [`run_parser`] over `SliceSource::with_scratch` with as much scratch as
/// the input is long.
pub fn run_parser_with_scratch(data: &[u8], kind: FormatKind) {
    let mut sc = scratch(data.len());
    let opened = no_alloc("open", || {
        Demuxer::open_as(SliceSource::with_scratch(data, &mut sc), kind, Limits::default())
    });
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

/// The detection target (with scratch, so formats that join packets are
/// reached too).
pub fn run_any(data: &[u8]) {
    let kind = detect(&data[..data.len().min(mediaslice::detect::DETECT_BYTES)], None);
    let mut sc = scratch(data.len());
    let opened = no_alloc("open", || {
        Demuxer::open_with(SliceSource::with_scratch(data, &mut sc), None, Limits::default())
    });
    if let (Some(k), Ok(d)) = (kind, &opened) {
        assert_eq!(
            d.format(),
            k,
            "invariant: open_with opened another format than detect names"
        );
    }
    exercise(data, opened, &Plan::full(extra_ts(data)));
}

pub(crate) fn open<S: Source>(src: S, kind: Option<FormatKind>) -> mediaslice::Result<Demuxer<S>> {
    match kind {
        Some(k) => Demuxer::open_as(src, k, Limits::default()),
        None => Demuxer::open_with(src, None, Limits::default()),
    }
}

pub(crate) fn diff_plan(extra_ts: i64) -> Plan {
    Plan {
        record: true,
        tags: true,
        seeks: true,
        extra_ts,
        packet_cap: DIFF_PACKET_CAP,
        keep_bytes: 0,
        pieces: false,
    }
}

/// Scratch for every run: enough for any packet a slice of `len` bytes can
/// hold, plus 64 KiB for the MPEG-TS/PS audio carry slots (8 KiB per split
/// track; eight tracks), as core's tests give (`common::scratch_for`). With
/// `len` alone, a whole input with more split tracks than its prefix ran out
/// of scratch where the prefix did not (a `truncation` finding that was the
/// harness's, not the library's).
pub(crate) fn scratch(len: usize) -> Vec<u8> {
    vec![0u8; len.max(64) + (64 << 10)]
}

pub(crate) fn stream_run<const BLOCKS: usize>(media: &[u8], cfg: &StreamConfig, plan: &Plan) -> Option<Log> {
    let reader = FuzzReader::new(media, cfg.chunk, cfg.seek).failing_from(cfg.fail_from);
    let src = match cfg.len {
        LenMode::Known => {
            ReaderSource::<_, _, BLOCKS>::with_blocks_and_len(reader, scratch(media.len()), media.len() as u64)
        }
        LenMode::SeekEnd => match ReaderSource::<_, _, BLOCKS>::with_blocks(reader, scratch(media.len())) {
            Ok(s) => s,
            Err(_) => return None,
        },
        LenMode::Shorter(k) => {
            let len = (media.len() as u64).saturating_sub(k);
            ReaderSource::<_, _, BLOCKS>::with_blocks_and_len(reader, scratch(media.len()), len)
        }
        LenMode::Longer(k) => {
            ReaderSource::<_, _, BLOCKS>::with_blocks_and_len(reader, scratch(media.len()), media.len() as u64 + k)
        }
    };
    let plan = Plan {
        pieces: cfg.pieces,
        ..*plan
    };
    Some(exercise(media, no_alloc("open", || open(src, cfg.kind)), &plan))
}

/// The slice-versus-stream differential target.
pub fn run_slice_vs_stream(data: &[u8]) {
    let (media, cfg) = StreamConfig::split(data);
    let plan = diff_plan(extra_ts(media));
    let stream = match cfg.blocks {
        0 => stream_run::<0>(media, &cfg, &plan),
        1 => stream_run::<1>(media, &cfg, &plan),
        2 => stream_run::<2>(media, &cfg, &plan),
        _ => stream_run::<8>(media, &cfg, &plan),
    };
    let Some(stream) = stream else { return };
    let view = match cfg.len {
        LenMode::Shorter(k) => &media[..media.len().saturating_sub(k as usize)],
        LenMode::Longer(_) => return, // invariants only: the reader runs dry
        _ => media,
    };
    let mut slice_scratch = scratch(media.len());
    let slice = exercise(
        view,
        open(SliceSource::with_scratch(view, &mut slice_scratch), cfg.kind),
        &plan,
    );
    compare_logs(&slice, &stream, cfg.seek != SeekMode::Full || cfg.fail_from.is_some());
}

/// Requires `stream` to log what `slice` logged. When the stream cannot seek
/// freely, it may instead stop agreeing at an event carrying an I/O error
/// (the refused seek), after which nothing is compared.
pub fn compare_logs(slice: &Log, stream: &Log, io_may_fail: bool) {
    for (i, (a, b)) in slice.events.iter().zip(stream.events.iter()).enumerate() {
        if a == b {
            continue;
        }
        if io_may_fail && matches!(b.error().map(|e| e.kind()), Some(mediaslice::ErrorKind::Io(_))) {
            return;
        }
        // A reader needs scratch for every packet it hands out (after the
        // MPEG-TS/PS audio carry slots, 8 KiB per split track), a slice only
        // for the packets it joins: with the same scratch the reader may stop
        // first, saying so.
        if matches!(
            b.error().map(|e| e.kind()),
            Some(mediaslice::ErrorKind::ScratchTooSmall)
        ) {
            return;
        }
        panic!("slice and stream differ at event {i}:\n slice:  {a:?}\n stream: {b:?}");
    }
    if slice.events.len() != stream.events.len() {
        panic!(
            "slice logged {} events, stream {} (first extra: {:?} / {:?})",
            slice.events.len(),
            stream.events.len(),
            slice.events.get(stream.events.len()),
            stream.events.get(slice.events.len())
        );
    }
}
