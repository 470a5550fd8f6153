//! One module per format family.

#[cfg(feature = "asf")]
pub mod asf;
#[cfg(feature = "flv")]
pub mod flv;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(any(feature = "ts", feature = "ps"))]
pub mod mpeg;
#[cfg(feature = "riff")]
pub mod riff;
