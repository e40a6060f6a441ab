"""The bundled example collection and the `proctor demo` job."""
