// The functions of this target are inline in include/CCofferSupport.h.
