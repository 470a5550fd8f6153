//! Files a muxer attaches (cover art, fonts): name, MIME type, description
//! and the bytes, borrowed from the caller and written with no copy, given
//! to [`crate::Muxer::write_header_with_attachments`]. Matroska stores them
//! as `Attachments` (RFC 9559 §5.1.6).

/// One attached file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment<'a> {
    /// File name (FileName, RFC 9559 §5.1.6.1.2), for example `cover.jpg`.
    pub name: &'a str,
    /// MIME type (FileMediaType, §5.1.6.1.3), for example `image/jpeg`.
    pub mime: &'a str,
    /// Description (FileDescription, §5.1.6.1.1); empty for none.
    pub description: &'a str,
    /// The file's bytes, written as they are.
    pub data: &'a [u8],
}
