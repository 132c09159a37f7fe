/* SPDX-License-Identifier: MIT */
/* wavesched path tracer — scenes on the host: the built-in Cornell box,
 * triangle meshes from files (glTF 2.0 and OBJ through assimp), scene
 * description files, the BVH (binned SAH) and the light list. The result is
 * the flat arrays pt_render uploads (pt.h). docs/pathtracer.md "Scenes". */
#ifndef WS_PT_SCENE_H
#define WS_PT_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "pt.h"

typedef struct pt_host_scene {
  pt_material *mats;
  uint32_t mat_count, mat_cap;
  pt_prim *prims;
  uint32_t prim_count, prim_cap;
  pt_tri *tris; /* BVH leaf order after pt_scene_finish */
  pt_tri_shade *shade;
  uint32_t tri_count, tri_cap;
  pt_texture *textures;
  uint32_t tex_count, tex_cap;
  float *texels;
  uint64_t texel_count, texel_cap;
  pt_bvh_node *nodes;
  uint32_t node_count;
  pt_light *lights;
  uint32_t light_count;
  uint32_t env_kind; /* pt_env_kind */
  pt_vec3 env_zenith, env_horizon;
  /* camera: the Cornell box's unless camera_set */
  int camera_set;
  pt_vec3 eye, target, up;
  float fov_deg; /* vertical */
  uint32_t files;    /* mesh files loaded */
  uint32_t bvh_depth; /* deepest leaf (root = 0) */
  int finished;
} pt_host_scene;

/* Where and how a mesh file goes into the scene. */
typedef struct pt_place {
  float scale;        /* uniform scale (ignored when fit > 0); default 1 */
  float fit;          /* > 0: scale so the largest extent is `fit`, bottom centre at `at` */
  pt_vec3 at;         /* translation (with fit: where the bottom centre goes) */
  float rotate_x, rotate_y; /* degrees, applied after scaling: x first, then y */
  int override;       /* 1: every material of the file becomes `material` */
  pt_material material;
  int vary;           /* 1: material i of the file gets distinct principled parameters */
  int checker;        /* 1: a checker pattern on the file's materials */
  float checker_scale;
  pt_vec3 checker_color;
} pt_place;

void pt_scene_init(pt_host_scene *s);
void pt_scene_free(pt_host_scene *s);
pt_place pt_place_default(void);

/* The Cornell box: walls and the area light; with objects = 1 also the
 * built-in block, spheres and pane (the default scene). 0 or -1 (memory). */
int pt_scene_add_cornell(pt_host_scene *s, int objects);

/* Adds the triangles of a mesh file (glTF 2.0 .gltf/.glb, OBJ, or anything
 * else assimp reads) with its node transforms, materials, normals, UVs and
 * base-colour textures, placed by `place`. 0, or -1 with a message naming
 * the file in err. */
int pt_scene_add_file(pt_host_scene *s, const char *path, const pt_place *place, char *err,
                      size_t err_cap);

/* `--scene FILE`: a scene description (*.scene, docs/pathtracer.md) or a mesh
 * file, which goes into the Cornell box (walls and light added first if the
 * scene is still empty), fitted to 1.2 units on the floor's centre. */
int pt_scene_load(pt_host_scene *s, const char *path, char *err, size_t err_cap);

/* Builds the BVH (reordering the triangles), the light list (emissive quads
 * and triangles, picked by power), and checks the scene has something to
 * see. 0 or -1 with a message. Call once, after the last add. */
int pt_scene_finish(pt_host_scene *s, char *err, size_t err_cap);

/* The pinhole camera for a width x height image. */
void pt_scene_camera(const pt_host_scene *s, uint32_t width, uint32_t height, pt_camera *out);

/* Host-side BVH build over triangles (used by pt_scene_finish and the BVH
 * test): reorders tris/shade in place into leaf order; nodes are malloc'ed.
 * 0 or -1 (memory). */
int pt_bvh_build(pt_tri *tris, pt_tri_shade *shade, uint32_t count, pt_bvh_node **nodes,
                 uint32_t *node_count, uint32_t *depth);

#endif
