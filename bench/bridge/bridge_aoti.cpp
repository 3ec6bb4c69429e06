// The C bridge to AOTInductor packages: load a .pt2 package and run it from
// C, no Python. Through torch::inductor::AOTIModelPackageLoader, the
// documented C++ loader: the package's call of rowops::fused_add_rms_norm
// goes through AOTInductor's proxy executor to the registered op, so the
// deployment path includes exactly the op's dispatch.
#include "bridge_tensor.h"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <memory>
#include <vector>

struct rowops_bridge_aoti {
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
};

extern "C" {

rowops_bridge_aoti *rowops_bridge_aoti_load(const char *package, char *err,
                                            size_t err_len)
{
    try {
        auto m = std::make_unique<rowops_bridge_aoti>();
        m->loader =
            std::make_unique<torch::inductor::AOTIModelPackageLoader>(package);
        return m.release();
    } catch (const std::exception &e) {
        rowops::bridge_fail(err, err_len, e.what());
        return nullptr;
    }
}

int rowops_bridge_aoti_run(rowops_bridge_aoti *m,
                           rowops_bridge_tensor *const *inputs, int n,
                           rowops_bridge_result *res, char *err, size_t err_len)
{
    return rowops::bridge_guard(err, err_len, [&] {
        std::vector<at::Tensor> in;
        in.reserve(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            in.push_back(inputs[i]->t);
        std::vector<at::Tensor> out = m->loader->run(in);
        TORCH_CHECK(out.size() <= 3,
                    "rowops_bridge_aoti_run: the package "
                    "returned ",
                    out.size(), " outputs, at most 3 expected");
        for (size_t i = 0; i < out.size(); ++i)
            rowops::bridge_set_output(res, static_cast<int>(i),
                                      std::move(out[i]));
        res->count = static_cast<int>(out.size());
        return 0;
    });
}

} // extern "C"
