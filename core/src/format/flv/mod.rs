//! FLV (stub).
use crate::demux::{Context, FormatDemuxer};
use crate::error::{Error, Result};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::Packet;

/// Demuxer state for FLV.
#[derive(Debug, Clone)]
pub struct FlvDemuxer {}

impl FormatDemuxer for FlvDemuxer {
    fn open<S: Source>(_src: &mut S, _ctx: &mut Context) -> Result<Self> {
        Err(Error::unsupported(0, "flv"))
    }
    fn next_packet<'s, S: Source>(&mut self, _src: &'s mut S, _ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        Ok(None)
    }
    fn seek<S: Source>(&mut self, _src: &mut S, _ctx: &mut Context, _track: usize, _ts: i64) -> Result<()> {
        Ok(())
    }
    fn next_tag<'s, S: Source>(
        &mut self,
        _src: &'s mut S,
        _ctx: &Context,
        _cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        Ok(None)
    }
}
