/* codec placeholder until the first codec lands. */
typedef int oct_codec_placeholder_t;
