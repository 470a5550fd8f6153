//! Where ASF's codec and picture knowledge comes from: the shared RIFF
//! registry (`crate::codec::riff_tags`: WAVE format tags, BITMAPINFOHEADER
//! FourCCs) and the shared picture tables (`crate::codec::picture`), as
//! ffmpeg's asfdec takes them from `riff.c` and `id3v2.c`.

pub(super) use crate::codec::picture::{codec_for_utf16_mime as picture_codec, PICTURE_TYPES};
pub(super) use crate::codec::riff_tags::{bmp_codec as video_codec, wave_codec as audio_codec};
