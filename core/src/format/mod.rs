//! One module per format family, the interfaces they implement
//! ([`traits`] to read, [`mux_traits`] to write), and the dispatch over all
//! of them ([`any`]).

pub mod any;
pub mod mux_traits;
pub mod traits;

#[cfg(feature = "aiff")]
pub mod aiff;
#[cfg(feature = "ape")]
pub mod ape;
#[cfg(feature = "asf")]
pub mod asf;
#[cfg(feature = "au")]
pub mod au;
#[cfg(feature = "avi")]
pub mod avi;
#[cfg(feature = "caf")]
pub mod caf;
#[cfg(feature = "dff")]
pub mod dff;
#[cfg(feature = "dsf")]
pub mod dsf;
pub mod es;
#[cfg(feature = "flac")]
pub mod flac;
#[cfg(feature = "flv")]
pub mod flv;
#[cfg(feature = "iff")]
pub mod iff;
#[cfg(feature = "mkv")]
pub mod mkv;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(any(feature = "ts", feature = "ps"))]
pub mod mpeg;
#[cfg(feature = "musepack")]
pub mod musepack;
#[cfg(feature = "mxf")]
pub mod mxf;
#[cfg(feature = "ogg")]
pub mod ogg;
#[cfg(feature = "riff")]
pub mod riff;
#[cfg(all(
    test,
    any(
        feature = "dsf",
        feature = "dff",
        feature = "wavpack",
        feature = "ape",
        feature = "musepack",
        feature = "mxf",
        feature = "iff",
        feature = "au"
    )
))]
mod test_drain;
#[cfg(feature = "tta")]
pub mod tta;
#[cfg(feature = "wavpack")]
pub mod wavpack;
#[cfg(any(feature = "ogg", feature = "flac"))]
pub mod xiph;
