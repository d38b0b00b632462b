/* memscope doctor: placeholder replaced below */
#include "commands.h"
int cmd_doctor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}
