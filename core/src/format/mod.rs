//! One module per format family.

pub mod es;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(feature = "riff")]
pub mod riff;
