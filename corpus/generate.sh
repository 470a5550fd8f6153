#!/usr/bin/env bash
# Regenerates the synthetic test corpus: corpus/files/<family>/<name>.<ext>
# plus the ffprobe oracle corpus/expected/<family>/<name>.<ext>.json.gz.
#
#   corpus/generate.sh            # from anywhere; rewrites files/ and expected/
#
# Every file comes from ffmpeg's lavfi sources (testsrc2, sine, aevalsrc,
# anoisesrc with a fixed seed), is encoded single-threaded with
# -fflags +bitexact / -flags +bitexact and no metadata copied from the input,
# so two runs with the same ffmpeg build give identical bytes.  Combinations
# whose encoder or muxer this ffmpeg lacks are skipped with a note (printed and
# recorded in corpus/SKIPPED.txt).  See corpus/README.md.
set -euo pipefail

CORPUS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$CORPUS"

FFMPEG=${FFMPEG:-ffmpeg}
FFPROBE=${FFPROBE:-ffprobe}
command -v "$FFMPEG" >/dev/null || { echo "generate.sh: $FFMPEG not found (apt-get install ffmpeg)" >&2; exit 1; }
command -v "$FFPROBE" >/dev/null || { echo "generate.sh: $FFPROBE not found" >&2; exit 1; }
command -v python3 >/dev/null || { echo "generate.sh: python3 not found" >&2; exit 1; }

export LC_ALL=C TZ=UTC

rm -rf files expected
mkdir -p files expected
: > SKIPPED.txt

# Names after the " ------" line of the listings.
ENCODERS=$("$FFMPEG" -hide_banner -encoders 2>/dev/null | awk 'f {print $2} /^ *-+ *$/ {f=1}')
MUXERS=$("$FFMPEG" -hide_banner -muxers 2>/dev/null | awk 'f {print $2} /^ *-+ *$/ {f=1}' | tr ',' '\n')

have_enc() { grep -qx "$1" <<<"$ENCODERS"; }
have_mux() { grep -qx "$1" <<<"$MUXERS"; }

skip() { # family/name reason
	printf '%s\t%s\n' "$1" "$2" >> SKIPPED.txt
	echo "SKIP  $1: $2"
}

# Output options shared by every file: no input metadata, bitexact muxer and
# encoders (no version strings, no random UIDs or serials, no wall-clock
# times), one thread (encoder output must not depend on the CPU count).
BITEXACT=(-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -threads 1)

# Sources.  Video: testsrc2 (moving pattern plus frame counter) at 25 fps.
# Audio: two sines, different per channel, so channel swaps show up.
vsrc() { # WxH duration [rate]
	echo "testsrc2=size=$1:rate=${3:-25}:duration=$2"
}
stereo() { # rate duration
	echo "aevalsrc=exprs=0.4*sin(440*2*PI*t)|0.4*sin(660*2*PI*t):sample_rate=$1:duration=$2"
}
mono() { # rate duration
	echo "sine=frequency=440:sample_rate=$1:duration=$2"
}
noise() { # rate duration (mono, fixed seed)
	echo "anoisesrc=color=pink:amplitude=0.3:seed=1234:sample_rate=$1:duration=$2"
}
six() { # rate duration: 5.1, one tone per channel
	echo "aevalsrc=exprs=0.3*sin(220*2*PI*t)|0.3*sin(330*2*PI*t)|0.3*sin(440*2*PI*t)|0.3*sin(550*2*PI*t)|0.3*sin(660*2*PI*t)|0.3*sin(770*2*PI*t):channel_layout=5.1:sample_rate=$1:duration=$2"
}

# gen FAMILY FILE REQUIREMENTS -- FFMPEG-ARGS...
# REQUIREMENTS are enc:NAME / mux:NAME; the combination is skipped when one is
# missing or when ffmpeg fails.
gen() {
	local fam=$1 file=$2; shift 2
	while [[ $1 != -- ]]; do
		case $1 in
		enc:*) have_enc "${1#enc:}" || { skip "$fam/$file" "encoder ${1#enc:} not in this ffmpeg"; return 0; } ;;
		mux:*) have_mux "${1#mux:}" || { skip "$fam/$file" "muxer ${1#mux:} not in this ffmpeg"; return 0; } ;;
		esac
		shift
	done
	shift
	mkdir -p "files/$fam"
	local out="files/$fam/$file" log
	if ! log=$("$FFMPEG" -nostdin -hide_banner -loglevel error -y "$@" "${BITEXACT[@]}" "$out" 2>&1); then
		rm -f "$out"
		# (drop the "@ 0x..." context pointers so SKIPPED.txt is reproducible)
		skip "$fam/$file" "ffmpeg failed: $(head -1 <<<"$log" | sed 's/ @ 0x[0-9a-f]*//' | cut -c1-160)"
		return 0
	fi
	echo "OK    $fam/$file ($(stat -c %s "$out") bytes)"
}

LAVFI=(-f lavfi -i)

# ---------------------------------------------------------------- ISO BMFF
H264=(-c:v libx264 -preset veryfast -g 12 -pix_fmt yuv420p)
AAC=(-c:a aac -b:a 96k)
gen mp4 h264_aac.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	"${H264[@]}" -bf 0 "${AAC[@]}"
gen mp4 h264_aac_faststart.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	"${H264[@]}" -bf 0 "${AAC[@]}" -movflags +faststart
gen mp4 h264_bframes_aac.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	"${H264[@]}" -bf 3 "${AAC[@]}"
gen mp4 h264_aac_fragmented.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 2)" "${LAVFI[@]}" "$(stereo 48000 2)" \
	"${H264[@]}" -bf 0 "${AAC[@]}" -movflags frag_keyframe+empty_moov+default_base_moof
gen mp4 hevc_aac.mp4 enc:libx265 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v libx265 -preset fast -pix_fmt yuv420p -x265-params pools=none:frame-threads=1:keyint=12:log-level=error \
	-tag:v hvc1 "${AAC[@]}"
gen mp4 h264_aac_tags.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	"${H264[@]}" -bf 0 "${AAC[@]}" \
	-metadata title="Mediaslice Test Title" -metadata artist="Mediaslice Artist" \
	-metadata album="Mediaslice Album" -metadata date=2024 -metadata genre=Test \
	-metadata comment="synthetic, generated by corpus/generate.sh" -metadata track=3/12
gen mp4 h264_pcm.mov enc:libx264 -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	"${H264[@]}" -bf 0 -c:a pcm_s16le
gen mp4 aac.m4a enc:aac -- \
	"${LAVFI[@]}" "$(stereo 44100 2)" "${AAC[@]}" -metadata title="Mediaslice Song"
gen mp4 h263_aac.3gp enc:h263 enc:aac mux:3gp -- \
	"${LAVFI[@]}" "$(vsrc 176x144 1 15)" "${LAVFI[@]}" "$(mono 16000 1)" \
	-c:v h263 -g 12 -c:a aac -b:a 32k
gen mp4 mpeg4_aac.3gp enc:mpeg4 enc:aac mux:3gp -- \
	"${LAVFI[@]}" "$(vsrc 176x144 1 15)" "${LAVFI[@]}" "$(mono 16000 1)" \
	-c:v mpeg4 -g 12 -c:a aac -b:a 32k
# AMR: Debian's ffmpeg has only the native amrnb/amrwb decoders (no
# libopencore-amrnb / libvo-amrwbenc), so these two are normally skipped;
# ../shared/samples/amr holds real AMR files.
gen mp4 h263_amrnb.3gp enc:libopencore_amrnb enc:h263 mux:3gp -- \
	"${LAVFI[@]}" "$(vsrc 176x144 1 15)" "${LAVFI[@]}" "$(mono 8000 1)" \
	-c:v h263 -g 12 -c:a libopencore_amrnb -b:a 12.2k
gen amr amrnb.amr enc:libopencore_amrnb mux:amr -- \
	"${LAVFI[@]}" "$(mono 8000 1)" -c:a libopencore_amrnb -b:a 12.2k

# ---------------------------------------------------------------- WAV / RF64 / Wave64
gen wav pcm_s16le.wav -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a pcm_s16le
gen wav pcm_s24le.wav -- "${LAVFI[@]}" "$(stereo 48000 1)" -c:a pcm_s24le
gen wav pcm_f32le.wav -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_f32le
gen wav pcm_u8_noise.wav -- "${LAVFI[@]}" "$(noise 8000 1)" -c:a pcm_u8
gen wav pcm_mulaw.wav -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a pcm_mulaw
gen wav pcm_alaw.wav -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a pcm_alaw
gen wav extensible_5.1.wav -- "${LAVFI[@]}" "$(six 48000 0.5)" -c:a pcm_s16le
gen wav bext.wav -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_s16le -write_bext 1 \
	-metadata description="Mediaslice BWF test" -metadata originator=mediaslice \
	-metadata originator_reference=MEDIASLICE0001 -metadata origination_date=2024-01-02 \
	-metadata origination_time=03:04:05 -metadata time_reference=48000
gen wav info_tags.wav -- "${LAVFI[@]}" "$(stereo 44100 0.5)" -c:a pcm_s16le \
	-metadata title="Mediaslice Title" -metadata artist="Mediaslice Artist" \
	-metadata comment="LIST INFO test" -metadata date=2024 -metadata genre=Test
gen wav rf64.wav -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_s16le -rf64 always
gen wav pcm_s16le.w64 mux:w64 -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_s16le -f w64

# ---------------------------------------------------------------- Matroska / WebM
gen matroska h264_aac.mkv enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 2)" "${LAVFI[@]}" "$(stereo 48000 2)" \
	"${H264[@]}" "${AAC[@]}"
gen matroska vp9_opus.webm enc:libvpx-vp9 enc:libopus mux:webm -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v libvpx-vp9 -deadline good -cpu-used 8 -row-mt 0 -g 12 -b:v 200k -c:a libopus -b:a 64k
gen matroska flac.mka enc:flac -- \
	"${LAVFI[@]}" "$(stereo 44100 1)" -c:a flac -metadata title="Mediaslice FLAC in Matroska"
gen matroska vp8_vorbis_live.webm enc:libvpx enc:libvorbis mux:webm -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v libvpx -deadline good -cpu-used 8 -g 12 -b:v 200k -c:a libvorbis -q:a 3 -live 1 -f webm

# Subtitles: two cues written here (WebVTT with an identifier and settings
# on the first, SubRip), muxed beside a short video.
CUES=$(mktemp -d)
trap 'rm -rf "$CUES"' EXIT
printf 'WEBVTT\n\nintro\n00:00.000 --> 00:00.400 align:start\nHello\n\n00:00.500 --> 00:00.900\nWorld\n' > "$CUES/cues.vtt"
printf '1\n00:00:00,000 --> 00:00:00,400\nHello\n\n2\n00:00:00,500 --> 00:00:00,900\nWorld\n' > "$CUES/cues.srt"
gen matroska vp8_webvtt.webm enc:libvpx mux:webm -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" -i "$CUES/cues.vtt" \
	-c:v libvpx -deadline good -cpu-used 8 -g 12 -b:v 200k -c:s webvtt -f webm
gen matroska mpeg4_srt_ass.mkv enc:mpeg4 -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" -i "$CUES/cues.srt" -map 0 -map 1 -map 1 \
	-c:v mpeg4 -g 12 -c:s:0 srt -c:s:1 ass
gen mp4 mpeg4_mov_text.mp4 enc:mpeg4 -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" -i "$CUES/cues.srt" -c:v mpeg4 -g 12 -c:s mov_text

# Unknown-size variant: every Cluster (and the Segment) gets the all-ones
# "unknown" size VINT of the same width, as a live encoder would write it.
unknown_size() { # in out
	python3 - "$1" "$2" <<'EOF'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())

def vint(pos):
    b = data[pos]
    n = 1
    while n <= 8 and not (b & (0x80 >> (n - 1))):
        n += 1
    assert n <= 8, "bad vint at %d" % pos
    v = b & (0xFF >> n)
    for i in range(1, n):
        v = (v << 8) | data[pos + i]
    return v, n

def unknown(pos, n):
    data[pos] = 0xFF >> (n - 1)
    for i in range(1, n):
        data[pos + i] = 0xFF

pos, clusters = 0, 0
while pos < len(data):
    eid, idn = vint(pos)
    idv = int.from_bytes(data[pos:pos + idn], 'big')
    size, sn = vint(pos + idn)
    body = pos + idn + sn
    if idv == 0x18538067:          # Segment: descend
        unknown(pos + idn, sn)
        end = len(data)
        p = body
        while p < end:
            cidn = vint(p)[1]
            cid = int.from_bytes(data[p:p + cidn], 'big')
            csize, csn = vint(p + cidn)
            if cid == 0x1F43B675:  # Cluster
                unknown(p + cidn, csn)
                clusters += 1
            p += cidn + csn + csize
        pos = end
    else:
        pos = body + size
assert clusters > 0
open(sys.argv[2], 'wb').write(data)
print("unknown-size clusters:", clusters, file=sys.stderr)
EOF
}
if [[ -f files/matroska/h264_aac.mkv ]]; then
	unknown_size files/matroska/h264_aac.mkv files/matroska/h264_aac_unknown_size_clusters.mkv 2>/dev/null
	echo "OK    matroska/h264_aac_unknown_size_clusters.mkv (rewritten from h264_aac.mkv)"
else
	skip matroska/h264_aac_unknown_size_clusters.mkv "needs matroska/h264_aac.mkv"
fi

# ---------------------------------------------------------------- Ogg
gen ogg vorbis.ogg enc:libvorbis -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a libvorbis -q:a 3 \
	-metadata title="Mediaslice Vorbis" -metadata artist="Mediaslice Artist"
gen ogg opus.opus enc:libopus -- "${LAVFI[@]}" "$(noise 48000 1)" -c:a libopus -b:a 48k
gen ogg flac.oga enc:flac -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a flac -f ogg
gen ogg theora_vorbis.ogv enc:libtheora enc:libvorbis -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	-c:v libtheora -q:v 5 -g 12 -c:a libvorbis -q:a 3
gen ogg speex.spx enc:libspeex -- "${LAVFI[@]}" "$(mono 16000 1)" -c:a libspeex -f ogg
# Cover art as METADATA_BLOCK_PICTURE comments (base64 FLAC PICTURE
# blocks): ffmpeg's Ogg muxer writes one value per key, so oggpic.py adds
# the entries to the files above (two pictures; one with a description;
# one entry of broken base64 before a good one; FLAC in Ogg with one).
PICS=$(mktemp -d)
"$FFMPEG" -nostdin -loglevel error "${LAVFI[@]}" "$(vsrc 64x48 1)" -frames:v 1 "${BITEXACT[@]}" "$PICS/front.png"
"$FFMPEG" -nostdin -loglevel error "${LAVFI[@]}" "$(vsrc 32x32 1)" -frames:v 1 -c:v mjpeg "${BITEXACT[@]}" "$PICS/back.jpg"
if [[ -f files/ogg/vorbis.ogg ]]; then
	python3 "$CORPUS/oggpic.py" files/ogg/vorbis.ogg files/ogg/vorbis_pictures.ogg \
		"3:image/png:Front cover:$PICS/front.png" "4:image/jpeg::$PICS/back.jpg"
fi
if [[ -f files/ogg/opus.opus ]]; then
	python3 "$CORPUS/oggpic.py" files/ogg/opus.opus files/ogg/opus_picture.opus "3:image/png:Front cover:$PICS/front.png"
	python3 "$CORPUS/oggpic.py" files/ogg/opus.opus files/ogg/opus_bad_picture.opus \
		"bad:AAAA!AAA" "4:image/jpeg:Back:$PICS/back.jpg"
fi
# FLAC in Ogg: ffmpeg writes one picture given as the comment's value.
gen ogg flac_picture.oga enc:flac -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a flac -f ogg \
	-metadata METADATA_BLOCK_PICTURE="$(python3 "$CORPUS/oggpic.py" --base64 "3:image/png:Front cover:$PICS/front.png")"
rm -rf "$PICS"

# ---------------------------------------------------------------- FLAC
gen flac s16_stereo.flac enc:flac -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a flac \
	-metadata title="Mediaslice FLAC" -metadata artist="Mediaslice Artist" -metadata tracknumber=1
gen flac s24_mono.flac enc:flac -- "${LAVFI[@]}" "$(mono 96000 0.5)" -c:a flac -sample_fmt s32 -bits_per_raw_sample 24

# ---------------------------------------------------------------- AVI
gen avi mpeg4_mp3.avi enc:mpeg4 enc:libmp3lame -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	-c:v mpeg4 -g 12 -q:v 5 -c:a libmp3lame -b:a 96k
gen avi mjpeg_pcm.avi enc:mjpeg -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 22050 1)" \
	-c:v mjpeg -pix_fmt yuvj420p -q:v 8 -c:a pcm_s16le

# ---------------------------------------------------------------- AIFF / AIFC
gen aiff pcm_s16be.aiff -- "${LAVFI[@]}" "$(stereo 44100 0.5)" -c:a pcm_s16be
gen aiff pcm_s24be_id3.aiff -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_s24be -write_id3v2 1 \
	-metadata title="Mediaslice AIFF" -metadata artist="Mediaslice Artist"
gen aiff pcm_f32be.aifc -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_f32be -f aiff
gen aiff pcm_alaw.aifc -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a pcm_alaw -f aiff
gen aiff adpcm_ima_qt.aifc enc:adpcm_ima_qt -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a adpcm_ima_qt -f aiff

# ---------------------------------------------------------------- CAF
gen caf alac.caf enc:alac mux:caf -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a alac
gen caf pcm_s16le.caf mux:caf -- "${LAVFI[@]}" "$(stereo 48000 0.5)" -c:a pcm_s16le
gen caf pcm_f32be.caf mux:caf -- "${LAVFI[@]}" "$(mono 48000 0.5)" -c:a pcm_f32be
gen caf adpcm_ima_qt.caf enc:adpcm_ima_qt mux:caf -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a adpcm_ima_qt
gen caf aac.caf enc:aac mux:caf -- "${LAVFI[@]}" "$(stereo 44100 1)" "${AAC[@]}"

# ---------------------------------------------------------------- Sun AU
gen au pcm_s16be.au mux:au -- "${LAVFI[@]}" "$(stereo 44100 0.5)" -c:a pcm_s16be \
	-metadata title="Mediaslice AU" -metadata artist="Mediaslice Artist" -metadata album="Mediaslice Album" \
	-metadata genre=Test -metadata track=5
gen au pcm_mulaw.au mux:au -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a pcm_mulaw
gen au pcm_alaw.au mux:au -- "${LAVFI[@]}" "$(stereo 22050 0.5)" -c:a pcm_alaw
gen au pcm_f32be.au mux:au -- "${LAVFI[@]}" "$(mono 48000 0.3)" -c:a pcm_f32be
gen au g726.au enc:g726le mux:au -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a adpcm_g726le -code_size 4

# ---------------------------------------------------------------- TTA
gen tta s16_stereo.tta enc:tta mux:tta -- "${LAVFI[@]}" "$(stereo 44100 2.5)" -c:a tta -sample_fmt s16 \
	-metadata title="Mediaslice TTA" -metadata artist="Mediaslice Artist"
gen tta s24_mono.tta enc:tta mux:tta -- "${LAVFI[@]}" "$(mono 48000 1.5)" -c:a tta -sample_fmt s32
gen tta u8_mono.tta enc:tta mux:tta -- "${LAVFI[@]}" "$(noise 8000 1)" -c:a tta -sample_fmt u8

# ---------------------------------------------------------------- WavPack
# ffmpeg's encoder makes blocks of at least 40000 samples × channels unless
# -frame_size is given: small blocks, several packets per short file.
gen wv s16_stereo.wv enc:wavpack mux:wv -- "${LAVFI[@]}" "$(stereo 8000 1)" -c:a wavpack -sample_fmt s16p -frame_size 2000
gen wv 5.1.wv enc:wavpack mux:wv -- "${LAVFI[@]}" "$(six 8000 0.5)" -c:a wavpack -sample_fmt s16p -frame_size 1000
gen wv s32_mono_tags.wv enc:wavpack mux:wv -- "${LAVFI[@]}" "$(mono 22050 0.5)" -c:a wavpack -sample_fmt s32p \
	-frame_size 4410 -metadata title="Mediaslice WavPack" -metadata artist="Mediaslice Artist"
# 37800 Hz is not in the flags' rate table: an ID_SAMPLE_RATE sub-block.
gen wv flt_mono_37800.wv enc:wavpack mux:wv -- "${LAVFI[@]}" "$(mono 37800 0.3)" -c:a wavpack -sample_fmt fltp -frame_size 3000

# ---------------------------------------------------------------- DSF / DSDIFF
# ffmpeg writes neither: dsd.py builds them (deterministic, no ffmpeg).
python3 "$CORPUS/dsd.py" files

# ---------------------------------------------------------------- Monkey's Audio / Musepack
# ffmpeg writes neither: apempc.py builds them (deterministic, no ffmpeg).
python3 "$CORPUS/apempc.py" files

# ---------------------------------------------------------------- IFF
# ffmpeg writes no IFF: iff.py builds the pictures and sounds
# (deterministic, no ffmpeg).
python3 "$CORPUS/iff.py" files

# ---------------------------------------------------------------- MXF
# OP1a (-f mxf: frame-wrapped, index table in the footer), D-10 (-f
# mxf_d10: 30 Mb/s MPEG-2 422P@ML I-frames at 720x608 and AES3 sound
# elements; noise keeps the frames above the CBR size, which the encoder
# would otherwise stuff past its limit) and OP-Atom (-f mxf_opatom: one
# clip-wrapped track per file, CBR index). DNxHR LB is the only VC-3
# profile at a small size; DV and D-10 frames are 144 000 / 150 000 bytes,
# so those files hold 2 frames.
MXFV=(-c:v mpeg2video -b:v 300k -g 6 -bf 2 -pix_fmt yuv420p)
gen mxf mpeg2_pcm.mxf enc:mpeg2video mux:mxf -- \
	"${LAVFI[@]}" "$(vsrc 160x120 0.4)" "${LAVFI[@]}" "$(stereo 48000 0.4)" "${MXFV[@]}" -c:a pcm_s16le -f mxf
gen mxf h264_pcm24.mxf enc:libx264 mux:mxf -- \
	"${LAVFI[@]}" "$(vsrc 160x120 0.4)" "${LAVFI[@]}" "$(stereo 48000 0.4)" \
	-c:v libx264 -preset veryfast -g 6 -bf 2 -pix_fmt yuv420p -c:a pcm_s24le -f mxf
gen mxf jpeg2000.mxf enc:jpeg2000 mux:mxf -- "${LAVFI[@]}" "$(vsrc 160x120 0.2)" -c:v jpeg2000 -f mxf
gen mxf dv_pcm.mxf enc:dvvideo mux:mxf -- \
	"${LAVFI[@]}" "$(vsrc 720x576 0.08)" "${LAVFI[@]}" "$(stereo 48000 0.08)" \
	-c:v dvvideo -pix_fmt yuv420p -c:a pcm_s16le -f mxf
gen mxf dnxhr_pcm.mxf enc:dnxhd mux:mxf -- \
	"${LAVFI[@]}" "$(vsrc 256x144 0.2)" "${LAVFI[@]}" "$(mono 48000 0.2)" \
	-c:v dnxhd -profile:v dnxhr_lb -pix_fmt yuv422p -c:a pcm_s16le -f mxf
gen mxf d10.mxf enc:mpeg2video mux:mxf_d10 -- \
	"${LAVFI[@]}" "$(vsrc 720x576 0.08),noise=alls=60:allf=t+u:all_seed=7,pad=720:608:0:32" \
	"${LAVFI[@]}" "$(stereo 48000 0.08)" \
	-c:v mpeg2video -pix_fmt yuv422p -g 0 -flags:v +ildct+low_delay -dc 10 -non_linear_quant 1 -intra_vlc 1 \
	-qscale:v 1 -ps 1 -qmin 1 -qmax 12 -rc_max_vbv_use 1 -rc_min_vbv_use 1 -minrate 30000k -maxrate 30000k \
	-b:v 30000k -bufsize 1200000 -rc_init_occupancy 1200000 -top 1 -c:a pcm_s16le -f mxf_d10
gen mxf dnxhr_opatom.mxf enc:dnxhd mux:mxf_opatom -- \
	"${LAVFI[@]}" "$(vsrc 256x144 0.12)" -c:v dnxhd -profile:v dnxhr_lb -pix_fmt yuv422p -f mxf_opatom
# 0.43 s, padded by the muxer to 0.44 s; no index segment: ffmpeg's reader
# makes one up (one sample frame per edit unit, 1920 per packet).
gen mxf pcm_opatom.mxf mux:mxf_opatom -- "${LAVFI[@]}" "$(mono 48000 0.43)" -c:a pcm_s16le -f mxf_opatom

# ---------------------------------------------------------------- ASF
gen asf wmv2_wmav2.wmv enc:wmv2 enc:wmav2 -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	-c:v wmv2 -g 12 -b:v 300k -c:a wmav2 -b:a 64k
gen asf wmav2.wma enc:wmav2 -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a wmav2 -b:a 64k \
	-metadata title="Mediaslice WMA" -metadata artist="Mediaslice Artist"

# ---------------------------------------------------------------- FLV
gen flv h264_aac.flv enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	"${H264[@]}" "${AAC[@]}"
gen flv flv1_mp3.flv enc:flv enc:libmp3lame -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 22050 1)" \
	-c:v flv -g 12 -q:v 5 -c:a libmp3lame -b:a 64k

# ---------------------------------------------------------------- MPEG-TS / M2TS
gen mpegts h264_aac.ts enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 2)" "${LAVFI[@]}" "$(stereo 48000 2)" \
	"${H264[@]}" "${AAC[@]}"
gen mpegts hevc_eac3.ts enc:libx265 enc:eac3 -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v libx265 -preset fast -pix_fmt yuv420p -x265-params pools=none:frame-threads=1:keyint=12:log-level=error \
	-c:a eac3 -b:a 96k
gen mpegts mpeg2_interlaced_mp2.ts enc:mpeg2video enc:mp2 -- \
	"${LAVFI[@]}" "$(vsrc 720x576 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v mpeg2video -b:v 800k -g 12 -bf 2 -flags:v +ildct+ilme -top 1 -pix_fmt yuv420p -c:a mp2 -b:a 128k
gen mpegts h264_aac.m2ts enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	"${H264[@]}" "${AAC[@]}" -f mpegts -mpegts_m2ts_mode 1

# ---------------------------------------------------------------- MPEG-PS
gen mpegps mpeg1_mp2.mpg enc:mpeg1video enc:mp2 -- \
	"${LAVFI[@]}" "$(vsrc 320x240 1)" "${LAVFI[@]}" "$(stereo 44100 1)" \
	-c:v mpeg1video -b:v 400k -g 12 -bf 2 -c:a mp2 -b:a 128k -f mpeg
gen mpegps mpeg2_ac3.vob enc:mpeg2video enc:ac3 mux:vob -- \
	"${LAVFI[@]}" "$(vsrc 720x480 1 30000/1001)" "${LAVFI[@]}" "$(stereo 48000 1)" \
	-c:v mpeg2video -b:v 800k -g 12 -bf 2 -pix_fmt yuv420p -c:a ac3 -b:a 192k -f vob

# ---------------------------------------------------------------- elementary audio
gen adts aac_lc.aac enc:aac -- "${LAVFI[@]}" "$(stereo 44100 1)" "${AAC[@]}" -f adts
gen adts aac_lc_mono_8k.aac enc:aac -- "${LAVFI[@]}" "$(mono 8000 1)" -c:a aac -b:a 16k -f adts
gen ac3 stereo.ac3 enc:ac3 -- "${LAVFI[@]}" "$(stereo 48000 1)" -c:a ac3 -b:a 192k -f ac3
gen ac3 5.1.ac3 enc:ac3 -- "${LAVFI[@]}" "$(six 48000 1)" -c:a ac3 -b:a 384k -f ac3
gen ac3 stereo.eac3 enc:eac3 mux:eac3 -- "${LAVFI[@]}" "$(stereo 48000 1)" -c:a eac3 -b:a 96k -f eac3
gen mp3 cbr_id3v2_id3v1.mp3 enc:libmp3lame -- "${LAVFI[@]}" "$(stereo 44100 1)" -c:a libmp3lame -b:a 128k \
	-id3v2_version 3 -write_id3v1 1 -metadata title="Mediaslice MP3" -metadata artist="Mediaslice Artist" \
	-metadata album="Mediaslice Album" -metadata date=2024 -metadata track=7 -metadata genre=Test
gen mp3 vbr_xing.mp3 enc:libmp3lame -- "${LAVFI[@]}" "$(noise 44100 1)" -c:a libmp3lame -q:a 4
gen mp3 cbr_bare.mp3 enc:libmp3lame -- "${LAVFI[@]}" "$(mono 22050 1)" -c:a libmp3lame -b:a 64k \
	-write_xing 0 -id3v2_version 0

# ---------------------------------------------------------------- elementary video
gen h264 baseline.h264 enc:libx264 -- "${LAVFI[@]}" "$(vsrc 160x120 1)" \
	"${H264[@]}" -profile:v baseline -f h264
gen h264 high_bframes.h264 enc:libx264 -- "${LAVFI[@]}" "$(vsrc 160x120 1)" \
	"${H264[@]}" -profile:v high -bf 3 -f h264
gen h265 main.hevc enc:libx265 -- "${LAVFI[@]}" "$(vsrc 160x120 1)" \
	-c:v libx265 -preset fast -pix_fmt yuv420p -x265-params pools=none:frame-threads=1:keyint=12:log-level=error -f hevc
gen ivf vp8.ivf enc:libvpx -- "${LAVFI[@]}" "$(vsrc 160x120 1)" \
	-c:v libvpx -deadline good -cpu-used 8 -g 12 -b:v 200k -f ivf
gen ivf vp9.ivf enc:libvpx-vp9 -- "${LAVFI[@]}" "$(vsrc 160x120 1)" \
	-c:v libvpx-vp9 -deadline good -cpu-used 8 -row-mt 0 -g 12 -b:v 200k -f ivf
AV1=(-c:v libaom-av1 -usage realtime -cpu-used 8 -row-mt 0 -tiles 1x1 -g 12 -b:v 150k)
gen ivf av1.ivf enc:libaom-av1 -- "${LAVFI[@]}" "$(vsrc 160x120 1)" "${AV1[@]}" -f ivf
gen av1obu av1.obu enc:libaom-av1 mux:obu -- "${LAVFI[@]}" "$(vsrc 160x120 1)" "${AV1[@]}" -f obu
gen dv pal.dv enc:dvvideo -- \
	"${LAVFI[@]}" "$(vsrc 720x576 0.4)" "${LAVFI[@]}" "$(stereo 48000 0.4)" \
	-c:v dvvideo -pix_fmt yuv420p -c:a pcm_s16le -f dv
gen dv ntsc.dv enc:dvvideo -- \
	"${LAVFI[@]}" "$(vsrc 720x480 0.4 30000/1001)" "${LAVFI[@]}" "$(stereo 48000 0.4)" \
	-c:v dvvideo -pix_fmt yuv411p -c:a pcm_s16le -f dv
gen mpegvideo mpeg2.m2v enc:mpeg2video -- "${LAVFI[@]}" "$(vsrc 352x288 1)" \
	-c:v mpeg2video -b:v 500k -g 12 -bf 2 -f mpeg2video
gen mpegvideo mpeg1.mpv enc:mpeg1video -- "${LAVFI[@]}" "$(vsrc 320x240 1)" \
	-c:v mpeg1video -b:v 400k -g 12 -bf 2 -f mpeg1video
gen m4v mpeg4_bframes.m4v enc:mpeg4 -- "${LAVFI[@]}" "$(vsrc 176x144 1)" \
	-c:v mpeg4 -b:v 300k -g 12 -bf 2 -f m4v
gen m4v mpeg4.m4v enc:mpeg4 -- "${LAVFI[@]}" "$(vsrc 176x144 1 30)" \
	-c:v mpeg4 -b:v 300k -g 12 -bf 0 -f m4v

# ---------------------------------------------------------------- chapters
# Two chapters from chapters.ffmeta (-map_chapters). -map_metadata -1 in
# BITEXACT drops their titles too, so mkv and mp3 set them again with
# -metadata:c:N; the mp4 keeps them empty, which leaves ffmpeg's chapter
# text track empty and has ffprobe read the Nero chpl box. Ogg: ffmpeg's
# muxer writes no chapters, so they are Vorbis comments (CHAPTERxxx /
# CHAPTERxxxNAME). Their oracle adds -show_chapters.
gen chapters h264_aac.mkv enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" -i chapters.ffmeta \
	-map 0 -map 1 -map_chapters 2 -metadata:c:0 title=Intro -metadata:c:1 "title=Second part" \
	"${H264[@]}" "${AAC[@]}"
gen chapters h264_aac.mp4 enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" -i chapters.ffmeta \
	-map 0 -map 1 -map_chapters 2 "${H264[@]}" -bf 0 "${AAC[@]}"
gen chapters mp3.mp3 enc:libmp3lame -- \
	"${LAVFI[@]}" "$(stereo 44100 1)" -i chapters.ffmeta -map 0 -map_chapters 1 \
	-metadata:c:0 title=Intro -metadata:c:1 "title=Second part" -c:a libmp3lame -b:a 64k
gen chapters vorbis.ogg enc:libvorbis -- \
	"${LAVFI[@]}" "$(stereo 44100 1)" -c:a libvorbis -q:a 2 \
	-metadata CHAPTER001=00:00:00.000 -metadata CHAPTER001NAME=Intro \
	-metadata CHAPTER002=00:00:00.400 -metadata CHAPTER002NAME="Second part"
# Two programs in one transport stream (video + audio, then a second
# audio); its oracle adds -show_programs.
gen programs two_programs.ts enc:libx264 enc:aac -- \
	"${LAVFI[@]}" "$(vsrc 160x120 1)" "${LAVFI[@]}" "$(stereo 48000 1)" "${LAVFI[@]}" "$(mono 48000 1)" \
	-map 0 -map 1 -map 2 "${H264[@]}" "${AAC[@]}" \
	-program title=First:st=0:st=1 -program title=Second:st=2

# ---------------------------------------------------------------- oracle
# ffprobe runs from files/ so "filename" is <family>/<file>, as in
# ../shared/samples/expected.
echo "ffprobe oracle ..."
printf 'family\tpath\tbytes\tsha256\tformat_name\tstreams\tpackets\n' > MANIFEST.tsv
(
	cd files
	find . -type f | sed 's|^\./||' | sort | while read -r rel; do
		fam=${rel%%/*}
		mkdir -p "../expected/$fam"
		extra=()
		[[ $fam == chapters ]] && extra=(-show_chapters)
		[[ $fam == programs ]] && extra=(-show_programs)
		"$FFPROBE" -v error -show_format -show_streams -show_packets -show_data_hash CRC32 "${extra[@]}" -of json "$rel" \
			| gzip -n -9 > "../expected/$rel.json.gz"
		python3 - "$rel" "../expected/$rel.json.gz" >> ../MANIFEST.tsv <<'EOF'
import gzip, hashlib, json, os, sys
rel, exp = sys.argv[1], sys.argv[2]
doc = json.loads(gzip.open(exp).read() or b'{}')
data = open(rel, 'rb').read()
fmt = doc.get('format', {}).get('format_name', 'ERROR')
print('\t'.join([rel.split('/')[0], rel, str(len(data)), hashlib.sha256(data).hexdigest(), fmt,
                 str(len(doc.get('streams', []))), str(len(doc.get('packets', [])))]))
EOF
	done
)

{
	"$FFMPEG" -version | head -1
	"$FFMPEG" -version | grep '^lib'
} > FFMPEG_VERSION

empty=$(awk -F'\t' 'NR>1 && $7==0 {print $2}' MANIFEST.tsv)
if [[ -n $empty ]]; then
	echo "ffprobe found no packets in:" $empty >&2
	exit 1
fi
echo "done: $(($(wc -l < MANIFEST.tsv) - 1)) files, $(wc -l < SKIPPED.txt) skipped; $(du -sh files expected | awk '{print $2" "$1}' | tr '\n' ' ')"
