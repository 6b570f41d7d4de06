/* query placeholder until the first query module lands. */
typedef int oct_query_placeholder_t;
