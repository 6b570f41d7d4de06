/* uid placeholder until the uid module lands. */
typedef int oct_uid_placeholder_t;
