//! `probe`, `tags` and `io`: the facts of a file without its packets.

use super::*;

/// `probe`: format, streams, tags and diagnostics.
pub(super) fn cmd_probe<S: Source, W: Write>(
    d: &mut Demuxer<S>,
    w: &mut W,
    json: bool,
    sections: ffprobe::gather::Sections,
    filename: &str,
) -> Outcome {
    if json {
        let (doc, tag_err) = ffprobe::gather::probe_json_with(d, filename, sections);
        serde_json::to_writer_pretty(&mut *w, &doc)?;
        w.write_all(b"\n")?;
        return Ok(tag_err);
    }
    let (tags, tag_err) = collect_tags(d);
    let f = facts(d, filename);
    writeln!(w, "file:       {filename}")?;
    writeln!(w, "format:     {} ({})", f.kind.ffmpeg_name(), f.kind.name())?;
    writeln!(w, "size:       {} bytes", f.size)?;
    if let Some(us) = f.duration_us {
        writeln!(w, "duration:   {:.6} s", us as f64 / 1e6)?;
    }
    if let Some(us) = f.start_us {
        writeln!(w, "start:      {:.6} s", us as f64 / 1e6)?;
    }
    if let Some(b) = f.bit_rate {
        writeln!(w, "bit rate:   {b} b/s")?;
    }
    writeln!(w, "streams:    {}", f.nb_streams)?;
    for (i, t) in d.tracks().iter().enumerate() {
        let tag = ffprobe::ffmpeg_codec_tag(t.codec_tag);
        write!(
            w,
            "  #{i} {}: {} ({} / 0x{tag:04x})",
            t.kind.ffmpeg_name(),
            t.codec.ffmpeg_name(),
            ffprobe::fourcc_string(tag)
        )?;
        match t.kind {
            mediaslice::TrackKind::Video => write!(w, ", {}x{}", t.width, t.height)?,
            mediaslice::TrackKind::Audio => write!(
                w,
                ", {} Hz, {} ch, {} bits",
                t.sample_rate, t.channels, t.bits_per_sample
            )?,
            _ => {}
        }
        write!(w, ", time base {}/{}", t.time_base.num, t.time_base.den)?;
        if let Some(dur) = t.duration {
            let secs = ffprobe::seconds(i64::try_from(dur).unwrap_or(i64::MAX), t.time_base);
            write!(w, ", duration {secs:.6} s ({dur} ticks)")?;
        }
        if let Some(n) = t.frames {
            write!(w, ", {n} frames")?;
        }
        if t.bit_rate > 0 {
            write!(w, ", {} b/s", t.bit_rate)?;
        }
        if !t.language.is_empty() {
            write!(w, ", language {}", t.language)?;
        }
        if t.default {
            write!(w, ", default")?;
        }
        writeln!(w)?;
        if let Some(st) = tags.streams.get(i) {
            for (k, v) in st {
                writeln!(w, "      {k}: {v}")?;
            }
        }
    }
    if !tags.format.is_empty() {
        writeln!(w, "tags:")?;
        for (k, v) in &tags.format {
            writeln!(w, "  {k}: {v}")?;
        }
    }
    let mut first = true;
    for (g, n) in d.diagnostics().iter() {
        if first {
            writeln!(w, "diagnostics:")?;
            first = false;
        }
        writeln!(w, "  {} at byte {} (x{n})", g.code, g.offset)?;
    }
    if d.diagnostics().dropped() > 0 {
        writeln!(w, "  ... and {} more", d.diagnostics().dropped())?;
    }
    Ok(tag_err)
}

pub(super) fn scope_text(s: TagScope) -> String {
    match s {
        TagScope::Format => "format".to_owned(),
        TagScope::Track(i) => format!("stream {i}"),
    }
}

/// `tags`: every tag the demuxer gives, with its key as stored, its common
/// name and its scope.
pub(super) fn cmd_tags<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool) -> Outcome {
    if json {
        let (tags, err) = collect_tags(d);
        let streams: Vec<serde_json::Value> = d
            .tracks()
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"index": i, "tags": tags.stream_json(i, t)}))
            .collect();
        let doc = serde_json::json!({
            "format": {"tags": tags.format_json()},
            "streams": streams,
        });
        serde_json::to_writer_pretty(&mut *w, &doc)?;
        w.write_all(b"\n")?;
        return Ok(err);
    }
    writeln!(w, "{:<10} {:<24} {:<20} value", "scope", "key", "name")?;
    for (i, t) in d.tracks().iter().enumerate() {
        if !t.language.is_empty() {
            writeln!(
                w,
                "{:<10} {:<24} {:<20} {}",
                format!("stream {i}"),
                "-",
                "language",
                t.language
            )?;
        }
    }
    d.rewind_tags();
    for _ in 0..MAX_TAGS {
        let t = match d.next_tag() {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(None),
            Err(e) => return Ok(Some(e)),
        };
        let value = match t.value {
            TagValue::Text(s) => s.to_owned(),
            TagValue::Int(i) => i.to_string(),
            TagValue::Bytes(b) => format!("<{} bytes>", b.len()),
        };
        let key = match t.key {
            TagKey::Text(_) => ffprobe::key_text(&t.key),
            TagKey::FourCc(_) => format!("'{}'", ffprobe::key_text(&t.key)),
        };
        writeln!(
            w,
            "{:<10} {:<24} {:<20} {}",
            scope_text(t.scope),
            key,
            t.name.unwrap_or("-"),
            value.escape_debug()
        )?;
    }
    Ok(None)
}

/// `io`: what a probe (open, tracks, duration, every tag) read, counted by
/// the source itself.
pub(super) fn cmd_io<S: Source, W: Write>(d: &mut Demuxer<S>, w: &mut W, json: bool, kind: SourceKind) -> Outcome {
    let (_, tag_err) = collect_tags(d);
    let _ = (d.tracks().len(), d.info().duration_us);
    let s = d.source().stats();
    let http = kind == SourceKind::Http;
    if json {
        if http {
            // For HTTP a read is a request; both names are given.
            writeln!(
                w,
                "{{\"bytes_read\": {}, \"reads\": {}, \"requests\": {}}}",
                s.bytes_read, s.reads, s.reads
            )?;
        } else {
            writeln!(w, "{{\"bytes_read\": {}, \"reads\": {}}}", s.bytes_read, s.reads)?;
        }
    } else {
        let what = match kind {
            SourceKind::Mmap => "mmap (accesses, not system calls)",
            SourceKind::Pread => "pread (system calls)",
            SourceKind::Reader => "reader (read calls)",
            SourceKind::Http => "http (range requests; bytes are response bodies)",
        };
        writeln!(w, "source:     {what}")?;
        writeln!(w, "file size:  {}", d.source().len())?;
        writeln!(w, "bytes read: {}", s.bytes_read)?;
        if http {
            writeln!(w, "requests:   {}", s.reads)?;
        } else {
            writeln!(w, "reads:      {}", s.reads)?;
            writeln!(w, "seeks:      {}", s.seeks)?;
        }
    }
    Ok(tag_err)
}
