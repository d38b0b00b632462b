/* How every printer writes numbers, so that the text, CSV and JSON outputs
 * and the reports agree and none prints float noise. */
#ifndef MEMSCOPE_NUMBER_FORMAT_H
#define MEMSCOPE_NUMBER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Significant digits kept by number_plain: more than any counter or clock
 * measures, fewer than the 17 that show a double's binary noise
 * (34.696075999999998 is 34.696076). */
#define NUMBER_DIGITS 15

/* For machines (CSV, JSON): the value with NUMBER_DIGITS significant digits
 * and no trailing zeros: "48", "0.200085939", "1.5e-07". NaN and infinities
 * are "nan", "inf", "-inf" (callers print their own word for no value). */
void number_plain(char *buf, size_t size, double value);
/* For people: whole counts with thousands separators ("1,234,567");
 * fractions with 2 decimals from 1 up, 4 below 1, 4 significant digits from
 * a million up. */
void number_human(char *buf, size_t size, double value, int is_integer);
/* A count in decimal digits ("%llu" without printf's parsing: perf's CSV
 * fields at -I 1 are 16,000 a second). size must hold 21 bytes. Returns
 * the length. */
size_t number_u64(char *buf, size_t size, uint64_t value);
/* Byte sizes in binary units: "32 KiB", "1 MiB", "27.5 MiB", "93.8 GiB". */
void number_bytes(char *buf, size_t size, uint64_t bytes);

#endif
