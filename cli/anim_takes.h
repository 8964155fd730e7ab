/* The `anim` subcommands on BVH takes (cli/anim_takes.c): argv[1] is the subcommand's name. */
#ifndef MN_CLI_ANIM_TAKES_H
#define MN_CLI_ANIM_TAKES_H

int mn_anim_crossfade(int argc, char** argv);
int mn_anim_root_motion(int argc, char** argv);
int mn_anim_loop(int argc, char** argv);
int mn_anim_retime(int argc, char** argv);

#endif
