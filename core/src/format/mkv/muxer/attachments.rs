//! The Matroska muxer's Attachments
//! ([`crate::Muxer::write_header_with_attachments`]): one `AttachedFile`
//! (RFC 9559 §5.1.6.1) per file: FileDescription when given, FileName,
//! FileMediaType, FileData (the caller's bytes, borrowed: one vectored
//! write with the element head) and FileUID (the file's index + 1: unique
//! in the file, as TrackUID is).

use super::ebml_write::{put_bytes, put_master, put_uint};
use crate::error::{Error, ErrorKind, Result};
use crate::format::mkv::ids;
use crate::mux::attachments::Attachment;
use crate::sink::Sink;

/// Most files attached in one Matroska file: each is measured and written
/// once, so this bounds the header's work, not memory.
pub const MAX_ATTACHMENTS: usize = 64;

/// Checks the attachments: at most [`MAX_ATTACHMENTS`], each with a name
/// and a MIME type (both mandatory, RFC 9559 §5.1.6.1.2 and §5.1.6.1.3).
///
/// Errors: `InvalidArgument` for an empty name or MIME type;
/// `CapacityExceeded` past the count.
pub(crate) fn check(files: &[Attachment<'_>]) -> Result<()> {
    if files.len() > MAX_ATTACHMENTS {
        return Err(Error::capacity(0, &"mkv muxer: more attachments than MAX_ATTACHMENTS"));
    }
    if files.iter().any(|f| f.name.is_empty() || f.mime.is_empty()) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            0,
            &"mkv muxer: an attachment without a FileName or FileMediaType (RFC 9559 5.1.6.1)",
        ));
    }
    Ok(())
}

/// Writes the `Attachments` element (nothing when `files` is empty).
pub(crate) fn write(k: &mut dyn Sink, files: &[Attachment<'_>]) -> Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    put_master(k, ids::ATTACHMENTS, &|k| {
        for (i, f) in files.iter().enumerate() {
            put_master(k, ids::ATTACHED_FILE, &|k| {
                if !f.description.is_empty() {
                    put_bytes(k, ids::FILE_DESCRIPTION, f.description.as_bytes())?;
                }
                put_bytes(k, ids::FILE_NAME, f.name.as_bytes())?;
                put_bytes(k, ids::FILE_MEDIA_TYPE, f.mime.as_bytes())?;
                put_bytes(k, ids::FILE_DATA, f.data)?;
                put_uint(k, ids::FILE_UID, i as u64 + 1)
            })?;
        }
        Ok(())
    })
}
