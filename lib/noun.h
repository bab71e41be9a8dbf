/* The noun of a count in a message: "1 byte", "2 bytes". Header only, as
 * sized.h, so each library has it without exporting anything. */
#ifndef JFR_NOUN_H
#define JFR_NOUN_H

/* `one` when n is 1, else `many`: "%llu %s", n, jfr__noun(n, "byte", "bytes"). */
static inline const char *jfr__noun(unsigned long long n, const char *one, const char *many) {
    return n == 1 ? one : many;
}

#endif
