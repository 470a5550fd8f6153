//! One module per format family.

#[cfg(feature = "aiff")]
pub mod aiff;
#[cfg(feature = "asf")]
pub mod asf;
#[cfg(feature = "avi")]
pub mod avi;
#[cfg(feature = "caf")]
pub mod caf;
pub mod es;
#[cfg(feature = "flv")]
pub mod flv;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(any(feature = "ts", feature = "ps"))]
pub mod mpeg;
#[cfg(feature = "riff")]
pub mod riff;
