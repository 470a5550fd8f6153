//! Script data tags (Adobe FLV 10.1 Annex E.4.4) and `onMetaData` (E.5):
//! which script tags become packets, what `open` reads from the metadata
//! (duration, picture size, data rates, the `keyframes` index), and the
//! metadata entries as format tags.

use super::amf::{marker, Amf};
use super::tag::{read_tag, Kind, TagHead};
use crate::error::Result;
use crate::format::traits::Context;
use crate::ieee754::Float;
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::ByteRange;

/// A script tag of at most this many bytes is a subtitle packet without
/// its name being read (ffmpeg's `flv_read_packet`: `size > 13 + 1 + 4`).
pub(super) const SHORT_SCRIPT_TAG: u32 = 13 + 1 + 4;

/// Longest script tag name compared (the names sorted on are shorter).
const MAX_SCRIPT_NAME: usize = 64;

/// Longest `onMetaData` key compared with the keys read or skipped (the
/// longest of them, `audiosamplesize`, has 15 bytes).
const MAX_KEY: usize = 16;

/// Most `onMetaData` entries walked, by `open` and by the tag walk alike:
/// a bound on the work of a forged metadata object, far above the few
/// dozen entries muxers write.
const MAX_METADATA_ENTRIES: u32 = 100_000;

/// Most properties of the `keyframes` object walked looking for `times`
/// and `filepositions` (muxers write just those two).
const MAX_KEYFRAMES_PROPERTIES: u32 = 64;

/// Most `keyframes` entries read by a seek (2^20: about 12 days of one key
/// frame a second); later entries are not used.
const MAX_KEYFRAME_ENTRIES: u32 = 1 << 20;

/// Size of one number in a strict array: the marker and a double (AMF 0
/// §2.2).
const AMF_NUMBER: u64 = 9;

/// What a script data tag is, by its name (ffmpeg's `flv_read_metabody`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Script {
    /// `onMetaData`: read at time 0, a subtitle packet otherwise.
    MetaData,
    /// `onCuePoint`, `|RtmpSampleAccess`: skipped at time 0, a subtitle
    /// packet otherwise.
    Header,
    /// `onCaptionInfo`: a subtitle packet.
    CaptionInfo,
    /// Anything else (and `onTextData`/`onCaption`, whose text ffmpeg
    /// extracts): a data packet.
    Other,
}

/// Names of the `onMetaData` keys that ffmpeg turns into stream parameters
/// rather than tags.
const TECHNICAL_KEYS: [&str; 13] = [
    "duration",
    "filesize",
    "width",
    "height",
    "videodatarate",
    "framerate",
    "videocodecid",
    "audiodatarate",
    "audiosamplerate",
    "audiosamplesize",
    "stereo",
    "audiocodecid",
    "datastream",
];

/// The track a script data tag's packet goes to, or `None` when it gives
/// no packet (ffmpeg's rules: header metadata at time 0 is read, not
/// delivered).
pub(super) fn script_kind<S: Source>(src: &mut S, t: &TagHead) -> Result<Option<Kind>> {
    if t.size == 0 {
        return Ok(None);
    }
    if t.size <= SHORT_SCRIPT_TAG {
        return Ok(Some(Kind::Subtitle));
    }
    Ok(match script_name(src, t)? {
        Script::MetaData | Script::Header if t.dts == 0 => None,
        Script::MetaData | Script::Header | Script::CaptionInfo => Some(Kind::Subtitle),
        Script::Other => Some(Kind::Data),
    })
}

/// Names a script data tag (Annex E.4.4) by its first AMF0 value, as
/// ffmpeg's `flv_read_metabody` sorts them.
pub(super) fn script_name<S: Source>(src: &mut S, t: &TagHead) -> Result<Script> {
    let [ty, l0, l1]: [u8; 3] = src.array(t.body)?;
    if ty != marker::STRING {
        return Ok(Script::Other);
    }
    let len = u16::from_be_bytes([l0, l1]) as usize;
    if len > MAX_SCRIPT_NAME || t.body + 3 + len as u64 > t.end() {
        return Ok(Script::Other);
    }
    let mut name = [0u8; MAX_SCRIPT_NAME];
    let n = name.get_mut(..len).unwrap_or(&mut []);
    src.read_exact_at(t.body + 3, n)?;
    Ok(match &*n {
        b"onMetaData" => Script::MetaData,
        b"onCuePoint" | b"|RtmpSampleAccess" => Script::Header,
        b"onCaptionInfo" => Script::CaptionInfo,
        _ => Script::Other,
    })
}

/// The `keyframes` index of `onMetaData` (a convention of flvtool/flvmeta
/// and FFmpeg's `flvflags=add_keyframe_index`): arrays of times (seconds)
/// and file positions, read in place.
#[derive(Debug, Clone, Copy)]
struct KeyframeIndex {
    times: u64,
    positions: u64,
    count: u32,
}

/// Picture size and data rates from `onMetaData` (Annex E.5).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MetaParams {
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) video_rate: u32,
    pub(super) audio_rate: u32,
}

/// What `open` found in the header `onMetaData` (Annex E.5).
#[derive(Debug, Clone, Default)]
pub(super) struct MetaData {
    /// The metadata value (after the name): its entries are the tags.
    range: Option<ByteRange>,
    /// The `keyframes` index, for seeking.
    keyframes: Option<KeyframeIndex>,
    /// Stream parameters, applied to the tracks at the end of `open` (the
    /// metadata comes before the tracks' first tags).
    pub(super) params: MetaParams,
}

/// The double of an AMF0 number whose marker is at `b[0]`, when `b` is
/// one (AMF 0 §2.2) and finite.
fn amf_number(b: &[u8; AMF_NUMBER as usize]) -> Option<Float> {
    let [ty, rest @ ..] = *b;
    (ty == marker::NUMBER).then(|| Float::from_be_f64(rest)).flatten()
}

impl MetaData {
    /// Reads what ffmpeg reads from `onMetaData` (Annex E.5): the duration,
    /// the picture size and the keyframes index; the tags are walked later
    /// by `next_tag`.
    pub(super) fn read<S: Source>(&mut self, src: &mut S, ctx: &mut Context, t: &TagHead) -> Result<()> {
        let name_len = u16::from_be_bytes(src.array(t.body + 1)?);
        let value = t.body + 3 + name_len as u64;
        let end = t.end().min(src.len());
        if self.range.is_none() && value < end {
            self.range = Some(ByteRange {
                offset: value,
                len: (end - value).min(u32::MAX as u64) as u32,
            });
        }
        let mut w = Amf::new(value, end);
        let mut guard = 0u32;
        let Some(mut entries) = w.open_map(src)? else {
            return Ok(());
        };
        while let Some((key, klen, vat)) = entries.next_key(src, &mut w)? {
            guard += 1;
            if guard > MAX_METADATA_ENTRIES {
                break;
            }
            self.read_entry(src, ctx, key, klen, vat, end)?;
            w.at = vat;
            if !w.skip_value(src, 0)? {
                break;
            }
        }
        Ok(())
    }

    /// One entry of `onMetaData`: its name at `key` (`klen` bytes), its
    /// value at `vat`.
    fn read_entry<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        key: u64,
        klen: u16,
        vat: u64,
        end: u64,
    ) -> Result<()> {
        let mut kb = [0u8; MAX_KEY];
        let short = klen as usize <= MAX_KEY;
        if short {
            src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
        }
        let k = kb.get(..klen as usize).unwrap_or(&[]);
        let [ty]: [u8; 1] = src.array(vat)?;
        if short && ty == marker::NUMBER {
            let v = Float::from_be_f64(src.array(vat + 1)?).filter(|v| !v.is_negative());
            let m = &mut self.params;
            // The f64 expressions ffmpeg evaluates, in integer arithmetic
            // (`ieee754`): `(v * 1e6) as u64`, `v as u32` below 1e6,
            // `(v * 1024.0) as u32` below 4e6.
            let below = |v: Float, max: i64| v.cmp_i64(max).is_lt();
            let times = |v: Float, k: u64| v.mul(Float::from_u64(k)).trunc_u64();
            let small = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
            match (k, v) {
                (b"duration", Some(v)) => ctx.info.duration_us = Some(times(v, 1_000_000).unwrap_or(u64::MAX)),
                (b"width", Some(v)) if below(v, 1_000_000) => m.width = small(v.trunc_u64()).unwrap_or(0),
                (b"height", Some(v)) if below(v, 1_000_000) => m.height = small(v.trunc_u64()).unwrap_or(0),
                (b"videodatarate", Some(v)) if below(v, 4_000_000) => m.video_rate = small(times(v, 1024)).unwrap_or(0),
                (b"audiodatarate", Some(v)) if below(v, 4_000_000) => m.audio_rate = small(times(v, 1024)).unwrap_or(0),
                _ => {}
            }
        }
        if short && k == b"keyframes" && ty == marker::OBJECT && self.keyframes.is_none() {
            self.keyframes = keyframes(src, vat, end)?;
        }
        Ok(())
    }

    /// A tag position at or before time `ts` (ms): the last `keyframes`
    /// entry at or before it, else `first_tag`.
    pub(super) fn tag_before<S: Source>(&self, src: &mut S, ctx: &mut Context, first_tag: u64, ts: i64) -> Result<u64> {
        let Some(k) = self.keyframes else {
            return Ok(first_tag);
        };
        if ts <= 0 {
            return Ok(first_tag);
        }
        let mut best = None;
        for i in 0..k.count.min(MAX_KEYFRAME_ENTRIES) as u64 {
            let (Ok(tb), Ok(pb)) = (
                src.array(k.times + i * AMF_NUMBER),
                src.array(k.positions + i * AMF_NUMBER),
            ) else {
                break;
            };
            let (Some(time), Some(pos)) = (amf_number(&tb), amf_number(&pb)) else {
                break;
            };
            if time.mul(Float::from_u64(1000)).cmp_i64(ts).is_gt() {
                break;
            }
            best = Some(pos.trunc_u64().unwrap_or(if pos.is_negative() { 0 } else { u64::MAX }));
        }
        if let Some(p) = best {
            if p >= first_tag && p < src.len() {
                if let Some(t) = read_tag(src, p)? {
                    if matches!(t.kind, 8 | 9 | 18) {
                        return Ok(p);
                    }
                }
            }
            ctx.diags.report("flv.bad-keyframe-index", p);
        }
        Ok(first_tag)
    }

    /// The next `onMetaData` entry as a format tag (Annex E.5): `cur.offset`
    /// is the next property; stage 0 before the map is opened, 1 while
    /// walking it, 2 at its end.
    pub(super) fn next_tag<'s, S: Source>(
        &self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        let Some(r) = self.range else {
            return Ok(None);
        };
        let end = r.offset + r.len as u64;
        if cur.stage == 0 {
            let mut w = Amf::new(r.offset, end);
            if w.open_map(src)?.is_none() {
                return Ok(None);
            }
            cur.stage = 1;
            cur.offset = w.at;
        }
        if cur.stage != 1 {
            return Ok(None);
        }
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > MAX_METADATA_ENTRIES {
                cur.stage = 2;
                return Ok(None);
            }
            let mut w = Amf::new(cur.offset, end);
            let Some((key, klen)) = w.read_key(src)? else {
                cur.stage = 2;
                return Ok(None);
            };
            let vat = w.at;
            if !w.skip_value(src, 0)? {
                cur.stage = 2;
                return Ok(None);
            }
            cur.offset = w.at;
            let scalar = match entry_value(src, vat)? {
                Value::Other => continue,
                Value::Scalar(v) => Some(v),
                Value::Text => None,
            };
            if is_technical_key(src, key, klen)? {
                continue;
            }
            let span = match scalar {
                Some(_) => klen as u64,
                None => {
                    let l = u16::from_be_bytes(src.array(vat + 1)?);
                    vat + 3 + l as u64 - key
                }
            };
            if span > ctx.limits.max_tag_bytes as u64 {
                continue;
            }
            // Decide first, then borrow once for the returned tag.
            let key_ok = core::str::from_utf8(src.bytes(key, klen as usize)?).is_ok();
            if !key_ok {
                continue;
            }
            let all = src.bytes(key, span as usize)?;
            return Ok(Some(entry_tag(all, klen, scalar)));
        }
    }
}

/// What an `onMetaData` value gives as a tag.
enum Value {
    /// A number (rounded, as ffmpeg's `%.f`) or a boolean.
    Scalar(TagValue<'static>),
    /// A string, borrowed from the input once the tag is returned.
    Text,
    /// Anything else (and a number that is not finite): no tag.
    Other,
}

/// Reads the type of the value at `vat` and, for a scalar, the value.
fn entry_value<S: Source>(src: &mut S, vat: u64) -> Result<Value> {
    let [ty]: [u8; 1] = src.array(vat)?;
    Ok(match ty {
        marker::NUMBER => {
            let Some(v) = Float::from_be_f64(src.array(vat + 1)?) else {
                return Ok(Value::Other);
            };
            Value::Scalar(TagValue::Int(v.round_i64_saturating()))
        }
        marker::BOOLEAN => {
            let [b]: [u8; 1] = src.array(vat + 1)?;
            Value::Scalar(TagValue::Text(if b != 0 { "true" } else { "false" }))
        }
        marker::STRING => Value::Text,
        _ => Value::Other,
    })
}

/// Whether the key at `key` (`klen` bytes) is one ffmpeg turns into a
/// stream parameter rather than a tag.
fn is_technical_key<S: Source>(src: &mut S, key: u64, klen: u16) -> Result<bool> {
    let mut kb = [0u8; MAX_KEY];
    if klen as usize > kb.len() {
        return Ok(false);
    }
    src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
    let k = kb.get(..klen as usize).unwrap_or(&[]);
    Ok(TECHNICAL_KEYS.iter().any(|t| t.as_bytes() == k))
}

/// The tag of an entry whose bytes from its name on are `all` (the name
/// is `klen` bytes; a string value follows its marker and length).
fn entry_tag<'a>(all: &'a [u8], klen: u16, scalar: Option<TagValue<'static>>) -> Tag<'a> {
    let (k, rest) = all.split_at((klen as usize).min(all.len()));
    let k = core::str::from_utf8(k).unwrap_or("");
    let value = match scalar {
        Some(v) => v,
        None => {
            let v = rest.get(3..).unwrap_or(&[]);
            match core::str::from_utf8(v) {
                Ok(s) => TagValue::Text(s),
                Err(_) => TagValue::Bytes(v),
            }
        }
    };
    Tag {
        scope: TagScope::Format,
        key: TagKey::Text(k),
        name: None,
        value,
    }
}

/// Finds the `times` and `filepositions` arrays of the keyframes object
/// at `at`.
fn keyframes<S: Source>(src: &mut S, at: u64, end: u64) -> Result<Option<KeyframeIndex>> {
    let mut w = Amf::new(at + 1, end);
    let mut times = None;
    let mut positions = None;
    let mut guard = 0;
    loop {
        guard += 1;
        if guard > MAX_KEYFRAMES_PROPERTIES || w.at.saturating_add(3) > end {
            break;
        }
        let Some((key, klen)) = w.read_key(src)? else { break };
        let [ty, n @ ..]: [u8; 5] = src.array(w.at)?;
        if ty == marker::STRICT_ARRAY && klen as usize <= MAX_KEY {
            let mut kb = [0u8; MAX_KEY];
            src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
            let n = u32::from_be_bytes(n);
            match kb.get(..klen as usize) {
                Some(b"times") => times = Some((w.at + 5, n)),
                Some(b"filepositions") => positions = Some((w.at + 5, n)),
                _ => {}
            }
        }
        if !w.skip_value(src, 0)? {
            break;
        }
    }
    Ok(match (times, positions) {
        (Some((t, n)), Some((p, m))) if n == m && n > 0 => Some(KeyframeIndex {
            times: t,
            positions: p,
            count: n,
        }),
        _ => None,
    })
}
