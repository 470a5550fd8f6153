//! The `programs` array of `probe --json --programs`, as ffprobe 5.1's
//! `-show_programs` prints it for MPEG-TS: per program `program_id` and
//! `program_num` (both the program_number), `nb_streams`, `pmt_pid`,
//! `pcr_pid` (-1 when its PMT was not found, ffmpeg's initial value), the
//! SDT's `service_name` and `service_provider` as `tags`, and its streams
//! (the same objects as in `streams`). A service that only the SDT lists
//! is printed as ffmpeg's `sdt_cb` makes it with `av_new_program`:
//! `program_num`, `pmt_pid` and `pcr_pid` 0, no streams. Other formats have
//! none (`[]`).

use mediaslice::{Demuxer, Source};
use serde_json::{json, Map, Value};

/// Programs read at most from one input.
pub const MAX_PROGRAMS: usize = 1_000;

/// The programs of `d`, `streams` being the `streams` array printed; a read
/// error ends the walk.
pub fn to_json<S: Source>(d: &mut Demuxer<S>, streams: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    d.rewind_programs();
    for _ in 0..MAX_PROGRAMS {
        let Ok(Some(p)) = d.next_program() else { break };
        let mut o = Map::new();
        o.insert("program_id".into(), json!(p.number));
        let (num, pcr) = if p.in_pat {
            (p.number, p.pcr_pid.map_or(-1, i64::from))
        } else {
            (0, 0)
        };
        o.insert("program_num".into(), json!(num));
        o.insert("nb_streams".into(), json!(p.tracks.len()));
        o.insert("pmt_pid".into(), json!(p.pmt_pid));
        o.insert("pcr_pid".into(), json!(pcr));
        let mut tags = Map::new();
        if let Some(n) = p.service_name {
            tags.insert("service_name".into(), json!(n));
        }
        if let Some(n) = p.service_provider {
            tags.insert("service_provider".into(), json!(n));
        }
        if !tags.is_empty() {
            o.insert("tags".into(), Value::Object(tags));
        }
        let st: Vec<Value> = p.tracks.iter().filter_map(|&i| streams.get(i).cloned()).collect();
        o.insert("streams".into(), Value::Array(st));
        out.push(Value::Object(o));
    }
    out
}
