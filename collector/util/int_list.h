/* A list of ints that grows by doubling and is emptied by setting nr to 0:
 * after the first few uses it never allocates again. */
#ifndef MEMSCOPE_INT_LIST_H
#define MEMSCOPE_INT_LIST_H

struct int_list {
	int *v;
	int nr, cap;
};

/* Append x; -1 (list unchanged) when memory runs out. */
int util_int_list_push(struct int_list *l, int x);

#endif
